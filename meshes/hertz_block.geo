// The quarter block of the Hertz verification (tests/verification/test_hertz.cpp)
// and of cases/sphere_on_block.yaml: x, y in [0, L], z in [0, H], the face
// z = 0 pressed by a rigid sphere centred on the z axis below it. Linear
// hexahedra graded geometrically toward the origin in x, y and z (each
// element `ratio` times its neighbour nearer the origin), so that the
// contact zone of radius a = 1 is fine while the block is large (the Hertz
// half-space). Physical groups (bipo's node sets): contact (z = 0), top
// (z = H), symmetry_x0 (x = 0), symmetry_y0 (y = 0), block (the volume).
//
// Two levels of one mapped refinement (n elements per edge, ratio^n fixed):
//   gmsh -3 -format msh4 meshes/hertz_block.geo -o meshes/hertz_block_coarse.msh
//       n = 10, ratio = 1.5625 (first element 0.164, 1331 nodes)
//   gmsh -3 -format msh4 -setnumber n 20 -setnumber ratio 1.25 meshes/hertz_block.geo \
//       -o meshes/hertz_block_fine.msh
//       n = 20, ratio = 1.25 (first element 0.073, 9261 nodes)
DefineConstant[ n = {10, Name "Parameters/elements per edge"} ];
DefineConstant[ ratio = {1.5625, Name "Parameters/grading ratio"} ];
L = 25;  // side in x and y
H = 25;  // height

Point(1) = {0, 0, 0};
Point(2) = {L, 0, 0};
Point(3) = {L, L, 0};
Point(4) = {0, L, 0};
Line(1) = {1, 2};  // y = 0
Line(2) = {2, 3};  // x = L
Line(3) = {4, 3};  // y = L
Line(4) = {1, 4};  // x = 0
Curve Loop(1) = {1, 2, -3, -4};
Plane Surface(1) = {1};
// Every line starts on the side of the origin: the elements grow away from it.
Transfinite Curve {1, 2, 3, 4} = n + 1 Using Progression ratio;
Transfinite Surface {1};
Recombine Surface {1};

// Layers of the same geometric grading in z: cumulative heights over H.
total = (ratio^n - 1) / (ratio - 1);
s = 0;
For k In {0 : n - 1}
  s += ratio^k;
  layers[k] = 1;
  heights[k] = s / total;
EndFor
heights[n - 1] = 1;
out[] = Extrude {0, 0, H} { Surface {1}; Layers {layers[], heights[]}; Recombine; };

// Extrude returns the top surface, the volume, then the lateral surfaces in
// the order of the curve loop's lines (1, 2, 3, 4).
Physical Surface("contact") = {1};
Physical Surface("top") = {out[0]};
Physical Surface("symmetry_y0") = {out[2]};
Physical Surface("symmetry_x0") = {out[5]};
Physical Volume("block") = {out[1]};
Mesh.MshFileVersion = 4.1;
