// The block of Example 2 in docs/case-file.md ("a block from a Gmsh file
// under fretting"): 10 x 10 x 4 mm, x and y in [-5, 5], z in [0, 4]; the face
// z = 0 rests on the contact plane. Physical groups (bipo's node sets):
// contact (z = 0), top (z = 4), front (y = -5), block (the volume).
//
// One geometry, three meshes (element size h = 1 mm), chosen with -setnumber:
//   gmsh -3 -format msh4 meshes/example2.geo -o meshes/example2.msh
//       kind = 0 (default): 10 x 10 x 4 hexahedra (transfinite, recombined)
//   gmsh -3 -format msh4 -setnumber kind 1 meshes/example2.geo -o meshes/example2_tet.msh
//       kind = 1: unstructured 4-node tetrahedra (Delaunay)
//   gmsh -3 -format msh4 -setnumber kind 2 meshes/example2.geo -o meshes/example2_wedge.msh
//       kind = 2: 6-node wedges (prisms), an unstructured triangle mesh of
//       the face z = 0 extruded in 4 layers
DefineConstant[ kind = {0, Choices{0 = "hexahedra", 1 = "tetrahedra", 2 = "wedges"},
                        Name "Parameters/element kind"} ];
L = 10;  // side in x and y (mm)
H = 4;   // height (mm)
DefineConstant[ h = {1, Name "Parameters/element size (mm)"} ];  // -setnumber h 0.5: finer

Point(1) = {-L / 2, -L / 2, 0, h};
Point(2) = {L / 2, -L / 2, 0, h};
Point(3) = {L / 2, L / 2, 0, h};
Point(4) = {-L / 2, L / 2, 0, h};
Line(1) = {1, 2};  // y = -L/2: extruded into the face "front"
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};

If (kind == 0)
  Transfinite Curve {1, 2, 3, 4} = L / h + 1;
  Transfinite Surface {1};
  Recombine Surface {1};
  out[] = Extrude {0, 0, H} { Surface {1}; Layers {H / h}; Recombine; };
ElseIf (kind == 2)
  out[] = Extrude {0, 0, H} { Surface {1}; Layers {H / h}; Recombine; };
Else
  out[] = Extrude {0, 0, H} { Surface {1}; };
EndIf

// Extrude returns the top surface, the volume, then the lateral surfaces in
// the order of the base's lines.
Physical Surface("contact") = {1};
Physical Surface("top") = {out[0]};
Physical Surface("front") = {out[2]};
Physical Volume("block") = {out[1]};
Mesh.MshFileVersion = 4.1;
