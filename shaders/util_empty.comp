#version 450
// Does nothing: used to measure the fixed cost of a dispatch (submit to fence).
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Unused { float data[]; };
void main() {}
