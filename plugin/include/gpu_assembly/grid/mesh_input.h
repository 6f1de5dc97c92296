// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_grid_mesh_input_h
#define gpu_assembly_grid_mesh_input_h

#include <deal.II/grid/tria.h>

#include <cstddef>
#include <istream>
#include <map>
#include <string>
#include <vector>

namespace GPUAssembly
{
  /**
   * What a mesh reader did beyond filling the triangulation: nodes of the
   * file that no element uses are dropped (deal.II refuses unused
   * vertices), which renumbers the vertices; a program that writes results
   * per file node maps them back through file_node_of_vertex.
   */
  struct MeshFileSummary
  {
    /// Nodes the file declares (or defines), used or not.
    std::size_t n_file_nodes = 0;
    /// Of those, the nodes no element uses, dropped.
    std::size_t n_unused_nodes = 0;
    /**
     * For each vertex of the triangulation, the node's number as the file
     * writes it (1-based for .dat, the node label for Abaqus). Empty where
     * the reader does not give it (deal.II's GridIn, which read_mesh() uses
     * for .msh, .vtk and .inp files other than tetrahedra: it drops unused
     * nodes itself and keeps the order of the others).
     */
    std::vector<long> file_node_of_vertex;

    /// "dropped N of M nodes that no element uses", or "" if none.
    std::string
    describe() const;
  };

  /**
   * Read a mesh file into @p tria, choosing the reader by the file's
   * extension: Gmsh (.msh), Abaqus (.inp) and legacy VTK (.vtk, ASCII
   * unstructured grids of versions 2.0 to 5.1; 5.1's OFFSETS and
   * CONNECTIVITY arrays and the METADATA blocks of 4.x and 5.x are
   * converted for it) through deal.II's GridIn, Abaqus files of
   * tetrahedra (C3D4) through read_abaqus(), and the tetrahedral .dat
   * format of the reference meshes (3D only). A missing, empty or malformed
   * file raises ExcMeshFile naming the file and, where known, the line and what
   * is wrong; so does a file of the other dimension (a 2D mesh given to a 3D
   * program), and a count in the file's header that the file is too small to
   * hold. @p tria is left untouched in that case. Nodes that no element uses
   * are dropped; the summary says how many.
   *
   * GridIn reads Abaqus files of quadrilaterals and hexahedra with the
   * vertices in the file's node order, but neither turns element sets into
   * material ids nor reads triangles; for 2D files with element sets or
   * triangles use read_abaqus(). The blocks of Abaqus/CAE files must be
   * closed (see read_abaqus()).
   */
  template <int dim>
  MeshFileSummary
  read_mesh(const std::string &filename, dealii::Triangulation<dim> &tria);

  /**
   * Read an Abaqus input file (.inp) into @p tria, with element sets as
   * materials. In 2D: linear triangles (CPS3, CPE3, S3, ...) or bilinear
   * quadrilaterals (CPS4, CPE4, CPE4R, ...), oriented counter-clockwise.
   * In 3D: linear tetrahedra (C3D4, C3D4H), oriented positively (a flat
   * one is refused). The sets, numbered 1, 2, ... in order of their first
   * appearance (an "elset=" on *Element, or an *Elset block, with or
   * without "generate"), give their elements that material_id; an element
   * in several sets gets the first; elements in no set keep material_id 0.
   * Returns the map from set name to material_id.
   *
   * Cells keep the file's element order; nodes that no element uses are
   * dropped (counted in @p summary, if given) and the others numbered in
   * order of first use. Keywords other than *Node, *Element and *Elset are
   * skipped, but the blocks of Abaqus/CAE files (*Part, *Assembly,
   * *Instance, *Step) must be closed by their *End line. Errors (unknown
   * element types, mixed cell types, nodes that do not exist, an element
   * set naming an element that does not exist, a block without its *End, a
   * last line without a line break, malformed numbers, an empty mesh) raise
   * ExcMeshFile naming the file and the line, before @p tria is touched.
   * @p name is used in error messages.
   */
  std::map<std::string, dealii::types::material_id>
  read_abaqus(std::istream             &input,
              dealii::Triangulation<2> &tria,
              const std::string        &name    = "<stream>",
              MeshFileSummary          *summary = nullptr);

  /// As above, in 3D.
  std::map<std::string, dealii::types::material_id>
  read_abaqus(std::istream             &input,
              dealii::Triangulation<3> &tria,
              const std::string        &name    = "<stream>",
              MeshFileSummary          *summary = nullptr);

  /// As above, from the file @p filename.
  template <int dim>
  std::map<std::string, dealii::types::material_id>
  read_abaqus(const std::string          &filename,
              dealii::Triangulation<dim> &tria,
              MeshFileSummary            *summary = nullptr);

  /**
   * Read the plain-text tetrahedral format of the reference sphere meshes
   * (tests/data/Sphere_*.dat):
   *
   *     DAT
   *     <n_nodes> <n_elements> 0
   *     x y z            (n_nodes lines)
   *     a b c d          (n_elements lines, 1-based node numbers)
   *
   * Every tetrahedron must be positively oriented (det[b-a, c-a, d-a] > 0);
   * an inverted or flat one is reported with its number and line. Nodes
   * that no element uses are dropped (the reference meshes of the GPU Gems
   * chapter have such nodes); the others become vertices in the file's
   * order, so that node n becomes vertex n - 1 when every node is used.
   * The summary says how many were dropped and which node each vertex is.
   * @p name is used in error messages.
   */
  MeshFileSummary
  read_dat(std::istream             &input,
           dealii::Triangulation<3> &tria,
           const std::string        &name = "<stream>");
} // namespace GPUAssembly

#endif
