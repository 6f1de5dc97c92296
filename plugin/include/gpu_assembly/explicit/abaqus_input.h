#ifndef gpu_assembly_explicit_abaqus_input_h
#define gpu_assembly_explicit_abaqus_input_h

#include <deal.II/grid/tria.h>

#include <istream>
#include <map>
#include <string>

namespace GPUAssembly
{
  namespace Explicit
  {
    /**
     * Read a 2D Abaqus input file (.inp) of linear triangles (CPS3, CPE3,
     * S3, ...) or bilinear quadrilaterals (CPS4, CPE4, CPE4R, ...) into
     * @p tria, with element sets as materials: the sets, numbered 1, 2, ...
     * in order of their first appearance (an "elset=" on *Element, or an
     * *Elset block, with or without "generate"), give their elements that
     * material_id; an element in several sets gets the first; elements in
     * no set keep material_id 0. Returns the map from set name to
     * material_id. deal.II 9.4's GridIn::read_abaqus assigns no material
     * from element sets and rejects triangles, hence this reader.
     *
     * Keywords other than *Node, *Element and *Elset are skipped. Errors
     * (unknown element types, nodes that do not exist, malformed numbers,
     * an empty mesh) raise ExcMeshFile naming the file and the line.
     */
    std::map<std::string, dealii::types::material_id>
    read_abaqus_with_sets(std::istream             &input,
                          dealii::Triangulation<2> &tria,
                          const std::string        &name = "<stream>");

    /// As above, from the file @p filename.
    std::map<std::string, dealii::types::material_id>
    read_abaqus_with_sets(const std::string        &filename,
                          dealii::Triangulation<2> &tria);
  } // namespace Explicit
} // namespace GPUAssembly

#endif
