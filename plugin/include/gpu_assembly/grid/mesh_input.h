#ifndef gpu_assembly_grid_mesh_input_h
#define gpu_assembly_grid_mesh_input_h

#include <deal.II/grid/tria.h>

#include <istream>
#include <string>

namespace GPUAssembly
{
  /**
   * Read a mesh file into @p tria, choosing the reader by the file's
   * extension: Gmsh (.msh), Abaqus (.inp) and VTK (.vtk) through deal.II's
   * GridIn, and the tetrahedral .dat format of the reference meshes
   * (3D only). A missing, empty or malformed file raises ExcMeshFile naming
   * the file and, where known, the line and what is wrong; @p tria is left
   * untouched in that case.
   */
  template <int dim>
  void
  read_mesh(const std::string &filename, dealii::Triangulation<dim> &tria);

  /**
   * Read the plain-text tetrahedral format of shared/meshes/README.md:
   *
   *     DAT
   *     <n_nodes> <n_elements> 0
   *     x y z            (n_nodes lines)
   *     a b c d          (n_elements lines, 1-based node numbers)
   *
   * Every tetrahedron must be positively oriented (det[b-a, c-a, d-a] > 0);
   * an inverted or flat one is reported with its number and line. Node n
   * of the file becomes vertex n - 1 of the triangulation. @p name is used
   * in error messages.
   */
  void
  read_dat(std::istream             &input,
           dealii::Triangulation<3> &tria,
           const std::string        &name = "<stream>");
} // namespace GPUAssembly

#endif
