// SPDX-License-Identifier: LGPL-2.1-or-later
// GPUAssembly::read_mesh, read_dat and read_abaqus: the reference .dat
// meshes read with the right counts, coordinates and volume; every kind of
// malformed .dat or Abaqus input raises ExcMeshFile naming the problem and
// its line, and leaves the triangulation as it was; Gmsh, VTK and Abaqus
// files go through deal.II's GridIn and round-trip meshes written by
// GridOut; read_abaqus turns element sets into material ids. The reference
// sphere written as VTK 4.2 (ParaView's layout), VTK 5.1 (meshio's OFFSETS
// and CONNECTIVITY) and Abaqus C3D4 (Abaqus/CAE's parts and assembly) reads
// as the same mesh as its .dat file and assembles the same Laplace matrix;
// each of them cut after any of its lines is refused or read whole.
//
// Reads the meshes of tests/data from the folder given as its argument, and
// writes its own files into the working directory (a folder of the build,
// which ctest gives it), so that the sources may be read-only; the files it
// writes are removed again.

#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/mapping_fe.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_out.h>
#include <deal.II/grid/grid_tools.h>
#include <deal.II/grid/reference_cell.h>
#include <deal.II/grid/tria.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/sparse_matrix.h>

#include <deal.II/numerics/matrix_creator.h>

#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/grid/mesh_input.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  /// The folder of the reference meshes (tests/data): the program's argument.
  std::string data_directory = ".";

  std::string
  data_file(const std::string &name)
  {
    return data_directory + "/" + name;
  }
} // namespace



void
write_file(const std::string &filename, const std::string &content)
{
  std::ofstream out(filename);
  out << content;
}



// The vertices and the vertex indices of every cell.
template <int dim>
struct MeshSnapshot
{
  std::vector<Point<dim>>                vertices;
  std::vector<std::vector<unsigned int>> cells;

  explicit MeshSnapshot(const Triangulation<dim> &tria)
    : vertices(tria.get_vertices())
  {
    for (const auto &cell : tria.active_cell_iterators())
      {
        cells.emplace_back();
        for (const unsigned int v : cell->vertex_indices())
          cells.back().push_back(cell->vertex_index(v));
      }
  }

  bool
  operator==(const MeshSnapshot &other) const
  {
    return vertices == other.vertices && cells == other.cells;
  }
};



double
volume(const Triangulation<3> &tria)
{
  double sum = 0;
  for (const auto &cell : tria.active_cell_iterators())
    sum += cell->measure();
  return sum;
}



// A .dat file read independently of read_dat(): nodes and 0-based elements.
struct DatFile
{
  std::vector<Point<3>>                  nodes;
  std::vector<std::vector<unsigned int>> elements;

  explicit DatFile(const std::string &filename)
  {
    std::ifstream input(filename);
    std::string   keyword;
    unsigned int  n_nodes, n_elements, zero;
    input >> keyword >> n_nodes >> n_elements >> zero;
    nodes.resize(n_nodes);
    for (Point<3> &p : nodes)
      input >> p[0] >> p[1] >> p[2];
    elements.resize(n_elements, std::vector<unsigned int>(4));
    for (auto &element : elements)
      for (unsigned int &v : element)
        {
          input >> v;
          --v;
        }
  }

  // Sum of det[b-a, c-a, d-a] / 6.
  double
  volume() const
  {
    double sum = 0;
    for (const auto &e : elements)
      {
        Tensor<2, 3> edges;
        for (unsigned int j = 0; j < 3; ++j)
          for (unsigned int k = 0; k < 3; ++k)
            edges[k][j] = nodes[e[j + 1]][k] - nodes[e[0]][k];
        sum += determinant(edges) / 6.;
      }
    return sum;
  }
};



void
test_reference_meshes(Testing::Checks &checks)
{
  const double sphere_volume = 4. / 3. * numbers::PI;
  double       coarse_volume = 0;
  for (const auto &[filename, n_nodes, n_elements] :
       {std::tuple<std::string, unsigned int, unsigned int>{"Sphere_63.dat",
                                                            63,
                                                            120},
        std::tuple<std::string, unsigned int, unsigned int>{"Sphere_305.dat",
                                                            305,
                                                            960}})
    {
      Triangulation<3> tria;
      read_mesh(data_file(filename), tria);
      const DatFile file(data_file(filename));
      checks.check(tria.n_vertices() == n_nodes &&
                     tria.n_used_vertices() == n_nodes &&
                     tria.n_active_cells() == n_elements &&
                     file.nodes.size() == n_nodes &&
                     file.elements.size() == n_elements,
                   filename + ": " + std::to_string(n_nodes) + " vertices, " +
                     std::to_string(n_elements) + " tetrahedra");
      checks.check(tria.get_vertices()[0] == file.nodes[0],
                   filename + ": vertex 0 is the first node of the file");
      checks.check(tria.get_vertices() == file.nodes,
                   filename + ": vertex n - 1 is node n of the file");
      checks.check(MeshSnapshot<3>(tria).cells == file.elements,
                   filename + ": cell e has the nodes of element e + 1");
      bool all_tets = tria.get_reference_cells().size() == 1;
      for (const auto &cell : tria.active_cell_iterators())
        all_tets &= cell->reference_cell() == ReferenceCells::Tetrahedron;
      checks.check(all_tets, filename + ": all cells are tetrahedra");

      const double       v = volume(tria);
      std::ostringstream what;
      what << filename << ": volume " << v
           << " = the file's sum of det/6, below that of the unit ball "
              "(inscribed polyhedron)";
      checks.check(std::abs(v - file.volume()) <= 1e-12 * v &&
                     v < sphere_volume,
                   what.str());
      // The mesh of 305 nodes is a uniform refinement of the one of 63:
      // its new nodes are edge midpoints, not projected onto the sphere
      // (only 62 nodes lie on it), so its volume is the coarse one,
      // 88.5% of 4/3 pi.
      if (n_nodes == 63)
        coarse_volume = v;
      else
        checks.check(std::abs(v - coarse_volume) <= 1e-12 * v &&
                       v > 0.85 * sphere_volume,
                     filename + ": volume equals that of Sphere_63.dat "
                                "(refined, not re-projected) and is within "
                                "15% of 4/3 pi");

      // read_dat() on a stream gives the same mesh.
      std::ifstream    input(data_file(filename));
      Triangulation<3> from_stream;
      read_dat(input, from_stream, filename);
      checks.check(MeshSnapshot<3>(from_stream) == MeshSnapshot<3>(tria),
                   filename + ": read_dat() on a stream gives the same mesh");
    }
}



// A valid two-tetrahedron mesh, line by line (line n is lines[n - 1]).
std::vector<std::string>
valid_dat_lines()
{
  return {"DAT",      // 1
          "5 2 0",    // 2
          "0 0 0",    // 3
          "1 0 0",    // 4
          "0 1 0",    // 5
          "0 0 1",    // 6
          "1 1 1",    // 7
          "1 2 3 4",  // 8
          "2 3 4 5"}; // 9
}



std::string
join(const std::vector<std::string> &lines)
{
  std::string text;
  for (const auto &line : lines)
    text += line + '\n';
  return text;
}



struct BadInput
{
  std::string name;
  std::string content;
  std::string expected;
  std::string what;
};



std::vector<BadInput>
bad_dat_inputs()
{
  std::vector<BadInput> inputs;
  const auto            modified = [](const unsigned int line_number,
                           const std::string &line) {
    std::vector<std::string> lines = valid_dat_lines();
    lines[line_number - 1]         = line;
    return join(lines);
  };
  std::vector<std::string> lines;

  lines = valid_dat_lines();
  lines.erase(lines.begin());
  inputs.push_back({"bad_no_keyword.dat",
                    join(lines),
                    "line 1: expected the keyword 'DAT', found '5'",
                    "missing DAT keyword"});
  inputs.push_back({"bad_keyword.dat",
                    modified(1, "DTA"),
                    "line 1: expected the keyword 'DAT', found 'DTA'",
                    "misspelt DAT keyword"});
  inputs.push_back({"bad_count_two.dat",
                    modified(2, "5 2"),
                    "line 2: expected '<n_nodes> <n_elements> 0', found "
                    "'5 2'",
                    "count line with two numbers"});
  inputs.push_back({"bad_count_four.dat",
                    modified(2, "5 2 0 1"),
                    "line 2: expected '<n_nodes> <n_elements> 0', found "
                    "'5 2 0 1'",
                    "count line with four numbers"});
  inputs.push_back({"bad_count_word.dat",
                    modified(2, "five 2 0"),
                    "line 2: expected '<n_nodes> <n_elements> 0'",
                    "count line with a word"});
  inputs.push_back({"bad_count_nonzero.dat",
                    modified(2, "5 2 1"),
                    "line 2: expected '<n_nodes> <n_elements> 0'",
                    "count line whose third number is not 0"});
  inputs.push_back({"bad_count_small.dat",
                    modified(2, "3 2 0"),
                    "line 2: a mesh needs at least 4 nodes and 1 element; "
                    "the file declares 3 nodes and 2 elements",
                    "count line with too few nodes"});
  // Counts far beyond the file's content must give an error, not an
  // attempt to allocate memory for them.
  inputs.push_back({"bad_count_huge_nodes.dat",
                    modified(2, "1000000000000 2 0"),
                    "line 8: node 6: expected three finite coordinates, "
                    "found '1 2 3 4'",
                    "count line declaring 10^12 nodes"});
  inputs.push_back({"bad_count_huge_elements.dat",
                    modified(2, "5 1000000000000 0"),
                    "line 9: the file ends after 2 of 1000000000000 elements",
                    "count line declaring 10^12 elements"});
  inputs.push_back({"bad_count_missing.dat",
                    "DAT\n",
                    "line 1: the file ends before the line",
                    "file ending after the keyword"});

  lines = valid_dat_lines();
  lines.resize(5);
  inputs.push_back({"bad_truncated_nodes.dat",
                    join(lines),
                    "line 5: the file ends after 3 of 5 nodes",
                    "truncated node list"});
  lines = valid_dat_lines();
  lines.resize(8);
  inputs.push_back({"bad_truncated_elements.dat",
                    join(lines),
                    "line 8: the file ends after 1 of 2 elements",
                    "truncated element list"});

  inputs.push_back({"bad_coordinate.dat",
                    modified(4, "1 x 0"),
                    "line 4: node 2: expected three finite coordinates, "
                    "found '1 x 0'",
                    "non-numeric coordinate"});
  inputs.push_back({"bad_two_coordinates.dat",
                    modified(5, "0 1"),
                    "line 5: node 3: expected three finite coordinates",
                    "node with two coordinates"});
  inputs.push_back({"bad_four_coordinates.dat",
                    modified(6, "0 0 1 0"),
                    "line 6: node 4: expected three finite coordinates",
                    "node with four coordinates"});

  inputs.push_back({"bad_node_zero.dat",
                    modified(8, "0 2 3 4"),
                    "line 8: element 1 refers to node 0, but nodes are "
                    "numbered 1 to 5",
                    "element referring to node 0"});
  inputs.push_back({"bad_node_too_large.dat",
                    modified(9, "2 3 4 6"),
                    "line 9: element 2 refers to node 6, but nodes are "
                    "numbered 1 to 5",
                    "element referring to node n_nodes + 1"});
  inputs.push_back({"bad_three_nodes.dat",
                    modified(9, "2 3 4"),
                    "line 9: element 2: expected four node numbers, found "
                    "'2 3 4'",
                    "element with three nodes"});
  inputs.push_back({"bad_repeated_node.dat",
                    modified(9, "2 3 3 5"),
                    "line 9: element 2 uses node 3 twice",
                    "element repeating a node"});
  inputs.push_back({"bad_inverted.dat",
                    modified(8, "2 1 3 4"),
                    "line 8: element 1 is inverted or flat",
                    "inverted element (two nodes swapped)"});
  inputs.push_back({"bad_flat.dat",
                    modified(7, "0.5 0.5 0"),
                    "line 9: element 2 is inverted or flat",
                    "flat element (node in the plane of the others)"});

  lines = valid_dat_lines();
  lines.push_back("garbage");
  inputs.push_back({"bad_trailing.dat",
                    join(lines),
                    "line 10: unexpected content after the last element: "
                    "'garbage'",
                    "trailing garbage line"});

  // Blank lines are skipped but counted.
  lines = valid_dat_lines();
  lines.insert(lines.begin() + 1, "");
  lines.insert(lines.begin() + 5, "   ");
  lines[9] = "2 1 3 4";
  inputs.push_back({"bad_blank_lines.dat",
                    join(lines),
                    "line 10: element 1 is inverted or flat",
                    "line numbers count blank lines"});

  inputs.push_back(
    {"bad_empty.dat", "", "'bad_empty.dat': the file is empty", "empty file"});
  inputs.push_back({"bad_blank.dat",
                    "\n   \n\t\n",
                    "'bad_blank.dat': the file is empty",
                    "file of blank lines"});
  return inputs;
}



void
test_bad_dat_files(Testing::Checks &checks)
{
  // A triangulation filled before: every failed read must leave it so.
  Triangulation<3> tria;
  read_mesh(data_file("Sphere_63.dat"), tria);
  const MeshSnapshot<3> before(tria);
  bool                  unchanged = true;

  // The valid variant reads.
  {
    write_file("bad_valid.dat", join(valid_dat_lines()));
    Triangulation<3> valid;
    read_mesh("bad_valid.dat", valid);
    std::remove("bad_valid.dat");
    checks.check(valid.n_vertices() == 5 && valid.n_active_cells() == 2 &&
                   std::abs(volume(valid) - 0.5) < 1e-14,
                 "the valid two-tetrahedron file reads (volume 1/6 + 1/3)");
  }

  // A node no element uses (here the third of six) is dropped and counted;
  // the others keep their order, and the summary maps vertices back to
  // the file's node numbers.
  {
    std::vector<std::string> lines = valid_dat_lines();
    lines[1]                       = "6 2 0";
    lines.insert(lines.begin() + 4, "7 7 7");
    for (std::size_t i = 8; i < lines.size(); ++i)
      {
        std::istringstream in(lines[i]);
        std::string        item, renumbered;
        while (in >> item)
          renumbered +=
            (renumbered.empty() ? "" : " ") +
            std::to_string(std::stoi(item) + (std::stoi(item) >= 3 ? 1 : 0));
        lines[i] = renumbered;
      }
    write_file("unused_node.dat", join(lines));
    Triangulation<3>      with_unused;
    const MeshFileSummary summary = read_mesh("unused_node.dat", with_unused);
    std::remove("unused_node.dat");
    Triangulation<3> valid;
    write_file("bad_valid.dat", join(valid_dat_lines()));
    read_mesh("bad_valid.dat", valid);
    std::remove("bad_valid.dat");
    checks.check(MeshSnapshot<3>(with_unused) == MeshSnapshot<3>(valid),
                 "a .dat file with an unused node reads as the mesh without "
                 "it");
    checks.check(summary.n_file_nodes == 6 && summary.n_unused_nodes == 1 &&
                   summary.file_node_of_vertex ==
                     std::vector<long>({1, 2, 4, 5, 6}) &&
                   summary.describe().find("dropped 1 of 6 nodes") == 0,
                 "the unused node is counted and the vertices map back to "
                 "the file's nodes 1, 2, 4, 5, 6");
  }

  for (const BadInput &input : bad_dat_inputs())
    {
      write_file(input.name, input.content);
      checks.check_throws<ExcMeshFile>(
        [&]() {
          read_mesh(input.name, tria);
        },
        input.expected,
        "read_mesh: " + input.what + ": \"" + input.expected + "\"");
      unchanged &= MeshSnapshot<3>(tria) == before;
      std::remove(input.name.c_str());

      // The same through read_dat() on a stream, except for what only a
      // file can be (empty).
      if (!input.content.empty())
        {
          std::istringstream stream(input.content);
          checks.check_throws<ExcMeshFile>(
            [&]() {
              read_dat(stream, tria, input.name);
            },
            input.expected,
            "read_dat: " + input.what);
          unchanged &= MeshSnapshot<3>(tria) == before;
        }
    }

  std::istringstream empty("");
  checks.check_throws<ExcMeshFile>(
    [&]() {
      read_dat(empty, tria);
    },
    "'<stream>': the file is empty",
    "read_dat: empty stream");
  unchanged &= MeshSnapshot<3>(tria) == before;

  checks.check_throws<ExcMeshFile>(
    [&]() {
      read_mesh("does_not_exist.dat", tria);
    },
    "'does_not_exist.dat': the file cannot be opened",
    "read_mesh: non-existent file");
  unchanged &= MeshSnapshot<3>(tria) == before;

  write_file("bad_mesh.xyz", join(valid_dat_lines()));
  checks.check_throws<ExcMeshFile>(
    [&]() {
      read_mesh("bad_mesh.xyz", tria);
    },
    "unknown extension '.xyz'",
    "read_mesh: unknown extension .xyz");
  unchanged &= MeshSnapshot<3>(tria) == before;
  std::remove("bad_mesh.xyz");

  write_file("bad_garbage.msh", "this is not a Gmsh file\n1 2 3\n");
  checks.check_throws<ExcMeshFile>(
    [&]() {
      read_mesh("bad_garbage.msh", tria);
    },
    "'bad_garbage.msh': deal.II's GridIn could not read it",
    "read_mesh: garbage .msh file is reported through GridIn");
  unchanged &= MeshSnapshot<3>(tria) == before;
  std::remove("bad_garbage.msh");

  checks.check(unchanged && tria.n_active_cells() == 120,
               "every failed read leaves the filled triangulation unchanged");

  // 2D: a .dat file cannot be read, and a failed read leaves a 2D mesh
  // as it was.
  Triangulation<2> tria_2d;
  GridGenerator::subdivided_hyper_cube(tria_2d, 2);
  const MeshSnapshot<2> before_2d(tria_2d);
  checks.check_throws<ExcMeshFile>(
    [&]() {
      read_mesh(data_file("Sphere_63.dat"), tria_2d);
    },
    "'" + data_file("Sphere_63.dat") +
      "': the .dat format holds 3D tetrahedral meshes; it cannot "
      "be read in 2D",
    "read_mesh: a .dat file into a 2D triangulation");
  write_file("bad_garbage_2d.msh", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n");
  checks.check_throws<ExcMeshFile>(
    [&]() {
      read_mesh("bad_garbage_2d.msh", tria_2d);
    },
    "GridIn",
    "read_mesh: truncated .msh file into 2D is reported through GridIn");
  std::remove("bad_garbage_2d.msh");
  checks.check(MeshSnapshot<2>(tria_2d) == before_2d,
               "the failed 2D reads leave the 2D triangulation unchanged");
}



// Write a distorted mesh with GridOut, read it back with read_mesh().
template <int dim>
void
test_round_trip(const std::string &format, Testing::Checks &checks)
{
  Triangulation<dim> tria;
  GridGenerator::subdivided_hyper_cube(tria, 3);
  GridTools::distort_random(0.25, tria, true, 4321);

  const std::string filename =
    "round_trip_" + std::to_string(dim) + "d." + format;
  {
    std::ofstream out(filename);
    // Full precision, so that vertices come back to rounding.
    out.precision(17);
    GridOut grid_out;
    if (format == "msh")
      grid_out.write_msh(tria, out);
    else
      grid_out.write_vtk(tria, out);
  }
  Triangulation<dim> read;
  read_mesh(filename, read);
  std::remove(filename.c_str());

  const std::string name = std::to_string(dim) + "D ." + format + ": ";
  checks.check(read.n_active_cells() == tria.n_active_cells() &&
                 read.n_vertices() == tria.n_vertices(),
               name + std::to_string(read.n_active_cells()) + " cells and " +
                 std::to_string(read.n_vertices()) + " vertices read back");
  double vertex_error = read.n_vertices() == tria.n_vertices() ? 0. : 1.;
  for (unsigned int v = 0; vertex_error < 1. && v < tria.n_vertices(); ++v)
    vertex_error =
      std::max(vertex_error,
               tria.get_vertices()[v].distance(read.get_vertices()[v]));
  std::ostringstream what;
  what << name << "vertices read back to " << vertex_error << " <= 1e-12";
  checks.check(vertex_error <= 1e-12, what.str());

  // Cells in the same order with the same vertices (as sets: a reader may
  // reorient a cell).
  bool cells_ok = read.n_active_cells() == tria.n_active_cells();
  for (auto a = tria.begin_active(), b = read.begin_active();
       cells_ok && a != tria.end();
       ++a, ++b)
    {
      std::vector<unsigned int> va, vb;
      for (const unsigned int v : a->vertex_indices())
        {
          va.push_back(a->vertex_index(v));
          vb.push_back(b->vertex_index(v));
        }
      std::sort(va.begin(), va.end());
      std::sort(vb.begin(), vb.end());
      cells_ok = va == vb && std::abs(a->measure() - b->measure()) <= 1e-12;
    }
  checks.check(cells_ok,
               name + "every cell has the vertices and the measure of the "
                      "one written");
}



void
test_abaqus(Testing::Checks &checks)
{
  Triangulation<2> tria;
  read_mesh(data_file("two_quads.inp"), tria);
  const std::vector<Point<2>> nodes =
    {{0., 0.}, {1., 0.}, {2.5, 0.}, {0., 1.}, {1.2, 1.1}, {2., 1.}};
  checks.check(tria.n_active_cells() == 2 && tria.n_vertices() == 6,
               "two_quads.inp: 2 cells and 6 vertices");
  checks.check(tria.get_vertices() == nodes,
               "two_quads.inp: vertex i is node i + 1 of the file");

  // Cell 1 has nodes 1 2 5 4, cell 2 has nodes 2 3 6 5 (counter-clockwise
  // in the file): deal.II's lexicographic order is 1 2 4 5 and 2 3 5 6.
  const std::vector<std::vector<unsigned int>> expected = {{0, 1, 3, 4},
                                                           {1, 2, 4, 5}};
  checks.check(MeshSnapshot<2>(tria).cells == expected,
               "two_quads.inp: cells have the file's nodes in deal.II's "
               "vertex order");
  double area     = 0;
  bool   positive = true;
  for (const auto &cell : tria.active_cell_iterators())
    {
      area += cell->measure();
      positive &= cell->measure() > 0;
    }
  checks.check(positive && std::abs(area - 2.35) < 1e-12,
               "two_quads.inp: cell areas 1.15 + 1.2 = 2.35");
}



// read_abaqus: element sets as materials, triangles, orientation, and an
// error naming the file and the line for every kind of malformed input.
void
test_abaqus_element_sets(Testing::Checks &checks)
{
  {
    Triangulation<2> tria;
    const auto       sets = read_abaqus(data_file("wave2d_weld.inp"), tria);
    const std::map<std::string, types::material_id> expected_sets =
      {{"Steel", 1}, {"Weld", 2}};
    checks.check(sets == expected_sets,
                 "wave2d_weld.inp: element sets Steel -> 1, Weld -> 2");
    unsigned int n_steel = 0, n_weld = 0;
    bool         triangles = true, positive = true;
    double       area = 0;
    for (const auto &cell : tria.active_cell_iterators())
      {
        n_steel += cell->material_id() == 1;
        n_weld += cell->material_id() == 2;
        triangles &= cell->reference_cell() == ReferenceCells::Triangle;
        positive &= cell->measure() > 0;
        area += cell->measure();
      }
    checks.check(tria.n_active_cells() == 384 && n_steel == 320 && n_weld == 64,
                 "wave2d_weld.inp: 384 triangles, 320 in Steel (material 1) "
                 "and 64 in Weld (material 2)");
    checks.check(triangles && positive && tria.n_vertices() == 225 &&
                   std::abs(area - 4.8e-5) < 1e-17,
                 "wave2d_weld.inp: all cells are triangles of positive area, "
                 "225 vertices, total area 0.012 x 0.004");
  }

  // Quadrilaterals with sets from "elset=" and from *Elset blocks (listed
  // and generated), an element in two sets, one in none, a clockwise
  // element, an unused node, comments and keywords to skip.
  {
    std::istringstream input("** a comment\n"
                             "*Heading\n"
                             " three quadrilaterals\n"
                             "*Node\n"
                             "1, 0., 0.\n"
                             "2, 1., 0.\n"
                             "3, 2., 0.\n"
                             "4, 3., 0.\n"
                             "5, 0., 1.\n"
                             "6, 1., 1.\n"
                             "7, 2., 1.\n"
                             "8, 3., 1.\n"
                             "9, 9., 9.\n"
                             "*Element, type=CPE4R, elset=Left\n"
                             "10, 1, 2, 6, 5\n"
                             "*Element, type=CPS4\n"
                             "11, 2, 3, 7, 6\n"
                             "12, 3, 7, 8, 4\n"
                             "*Elset, elset=Right, generate\n"
                             "10, 12, 2\n"
                             "*Elset, elset=Middle\n"
                             "11\n"
                             "*Solid Section, elset=Left, material=Steel\n");
    Triangulation<2>   tria;
    const auto         sets = read_abaqus(input, tria, "three_quads.inp");
    const std::map<std::string, types::material_id> expected_sets =
      {{"Left", 1}, {"Right", 2}, {"Middle", 3}};
    checks.check(sets == expected_sets,
                 "read_abaqus: sets numbered in order of first appearance "
                 "(Left -> 1, Right -> 2, Middle -> 3)");
    std::vector<types::material_id> materials;
    bool                            positive = true;
    for (const auto &cell : tria.active_cell_iterators())
      {
        materials.push_back(cell->material_id());
        positive &= std::abs(cell->measure() - 1.) < 1e-14;
      }
    checks.check(materials == std::vector<types::material_id>{1, 3, 2},
                 "read_abaqus: element 10 in Left and Right gets Left's 1, "
                 "11 gets Middle's 3, 12 (generated) gets Right's 2");
    checks.check(positive,
                 "read_abaqus: every cell, the clockwise element 12 too, has "
                 "area +1");
    checks.check(tria.n_vertices() == 8,
                 "read_abaqus: the node no element uses is dropped");
  }

  // two_quads.inp, which GridIn reads too: the same cells, no sets.
  {
    Triangulation<2> tria;
    const auto       sets = read_abaqus(data_file("two_quads.inp"), tria);
    double           area = 0;
    bool             no_material = true;
    for (const auto &cell : tria.active_cell_iterators())
      {
        area += cell->measure();
        no_material &= cell->material_id() == 0;
      }
    checks.check(sets.empty() && no_material && tria.n_active_cells() == 2 &&
                   std::abs(area - 2.35) < 1e-12,
                 "read_abaqus: two_quads.inp has 2 cells of area 2.35, no "
                 "sets and material id 0");
  }

  const std::string nodes = "*Node\n"     // 1
                            "1, 0., 0.\n" // 2
                            "2, 1., 0.\n" // 3
                            "3, 1., 1.\n" // 4
                            "4, 0., 1.\n" // 5
    ;
  const std::vector<BadInput> inputs = {
    {"bad_type.inp",
     nodes + "*Element, type=C3D4\n1, 1, 2, 3, 4\n",
     "'bad_type.inp', line 6: element type 'C3D4' is not a linear triangle "
     "or bilinear quadrilateral",
     "3D element type"},
    {"bad_mixed.inp",
     nodes + "*Element, type=CPS4\n1, 1, 2, 3, 4\n"
             "*Element, type=CPS3\n2, 1, 2, 3\n",
     "line 8: triangles and quadrilaterals are mixed",
     "triangles and quadrilaterals mixed"},
    {"bad_node_count.inp",
     nodes + "*Element, type=CPS4\n1, 1, 2, 3\n",
     "line 7: expected an element number and 4 nodes",
     "quadrilateral with three nodes"},
    {"bad_integer.inp",
     nodes + "*Element, type=CPS3\n1, 1, 2, x3\n",
     "line 7: 'x3' is not an integer",
     "malformed node number"},
    {"bad_twice.inp",
     nodes + "*Element, type=CPS3\n1, 1, 2, 3\n1, 1, 3, 4\n",
     "line 8: element 1 is defined twice",
     "element defined twice"},
    {"bad_undefined_node.inp",
     nodes + "*Element, type=CPS3\n1, 1, 2, 7\n",
     "'bad_undefined_node.inp': element 1 refers to node 7, which is not "
     "defined",
     "element referring to an undefined node"},
    {"bad_coordinates.inp",
     "*Node\n1, 0., zero\n",
     "line 2: malformed coordinates",
     "malformed coordinate"},
    {"bad_one_coordinate.inp",
     "*Node\n1, 0.\n",
     "line 2: a node needs a number and two coordinates",
     "node with one coordinate"},
    {"bad_elset_name.inp",
     nodes + "*Element, type=CPS3\n1, 1, 2, 3\n*Elset\n1\n",
     "line 8: *Elset without a name",
     "*Elset without a name"},
    {"bad_generate.inp",
     nodes + "*Element, type=CPS3\n1, 1, 2, 3\n"
             "*Elset, elset=A, generate\n5, 1\n",
     "line 9: bad generate range",
     "generate range from 5 down to 1"},
    {"bad_no_elements.inp",
     nodes,
     "'bad_no_elements.inp': no *Node or *Element data found",
     "file without elements"}};

  Triangulation<2> tria;
  GridGenerator::subdivided_hyper_cube(tria, 2);
  const MeshSnapshot<2> before(tria);
  bool                  unchanged = true;
  for (const BadInput &input : inputs)
    {
      write_file(input.name, input.content);
      checks.check_throws<ExcMeshFile>(
        [&]() {
          read_abaqus(input.name, tria);
        },
        input.expected,
        "read_abaqus: " + input.what + ": \"" + input.expected + "\"");
      unchanged &= MeshSnapshot<2>(tria) == before;
      std::remove(input.name.c_str());
    }
  checks.check_throws<ExcMeshFile>(
    [&]() {
      read_abaqus("does_not_exist.inp", tria);
    },
    "'does_not_exist.inp': the file cannot be opened",
    "read_abaqus: non-existent file");
  checks.check(unchanged && MeshSnapshot<2>(tria) == before,
               "every failed read_abaqus leaves the triangulation unchanged");
}


// The Laplace matrix of linear simplices on @p tria, as a map from the
// coordinates of the vertex pair to the entry: meshes whose vertices are
// numbered differently compare through it.
std::map<std::pair<std::array<double, 3>, std::array<double, 3>>, double>
laplace_by_vertex(const Triangulation<3> &tria)
{
  const FE_SimplexP<3> fe(1);
  const MappingFE<3>   mapping(fe);
  DoFHandler<3>        dof_handler(tria);
  dof_handler.distribute_dofs(fe);
  DynamicSparsityPattern dsp(dof_handler.n_dofs());
  DoFTools::make_sparsity_pattern(dof_handler, dsp);
  SparsityPattern pattern;
  pattern.copy_from(dsp);
  SparseMatrix<double> matrix(pattern);
  MatrixCreator::create_laplace_matrix(mapping,
                                       dof_handler,
                                       QGaussSimplex<3>(2),
                                       matrix);
  std::vector<std::array<double, 3>> where(dof_handler.n_dofs());
  for (const auto &cell : dof_handler.active_cell_iterators())
    for (const unsigned int v : cell->vertex_indices())
      for (unsigned int d = 0; d < 3; ++d)
        where[cell->vertex_dof_index(v, 0)][d] = cell->vertex(v)[d];
  std::map<std::pair<std::array<double, 3>, std::array<double, 3>>, double>
    result;
  for (const auto &entry : matrix)
    result[{where[entry.row()], where[entry.column()]}] = entry.value();
  return result;
}



void
test_other_formats(Testing::Checks &checks)
{
  Triangulation<3> reference;
  read_mesh(data_file("Sphere_63.dat"), reference);
  const auto reference_matrix = laplace_by_vertex(reference);
  double     largest          = 0;
  for (const auto &entry : reference_matrix)
    largest = std::max(largest, std::abs(entry.second));

  for (const std::string name :
       {"Sphere_63_v42.vtk", "Sphere_63_v51.vtk", "Sphere_63_c3d4.inp"})
    {
      Triangulation<3> tria;
      read_mesh(data_file(name), tria);
      checks.check(tria.n_active_cells() == reference.n_active_cells() &&
                     tria.n_vertices() == reference.n_vertices(),
                   name + ": " + std::to_string(tria.n_active_cells()) +
                     " cells and " + std::to_string(tria.n_vertices()) +
                     " vertices, as Sphere_63.dat");
      // Cell by cell the same vertices, by position, in the same order.
      bool same_cells = tria.n_active_cells() == reference.n_active_cells();
      for (auto a = tria.begin_active(), b = reference.begin_active();
           same_cells && a != tria.end();
           ++a, ++b)
        for (const unsigned int v : a->vertex_indices())
          same_cells &= a->vertex(v) == b->vertex(v);
      checks.check(same_cells,
                   name + ": every cell has the vertices of Sphere_63.dat's "
                          "cell, in its order");
      const auto matrix = laplace_by_vertex(tria);
      double     difference =
        matrix.size() == reference_matrix.size() ? 0. : largest;
      for (const auto &[pair, value] : matrix)
        {
          const auto it = reference_matrix.find(pair);
          difference    = std::max(difference,
                                it == reference_matrix.end() ?
                                     largest :
                                     std::abs(value - it->second));
        }
      std::ostringstream what;
      what << name << ": the Laplace matrix equals Sphere_63.dat's to "
           << difference << " <= 1e-14 of its largest entry " << largest;
      checks.check(difference <= 1e-14 * largest, what.str());

      // Cut after each of its lines: refused, or (after the last line that
      // the mesh needs) read whole, never read as a smaller mesh.
      std::ifstream            in(data_file(name));
      std::vector<std::string> lines;
      for (std::string line; std::getline(in, line);)
        lines.push_back(line);
      std::string       text;
      unsigned int      n_smaller = 0, n_refused = 0;
      const std::string cut = "cut_" + name;
      for (std::size_t i = 0; i + 1 < lines.size(); ++i)
        {
          text += lines[i] + "\n";
          write_file(cut, text);
          Triangulation<3> part;
          try
            {
              read_mesh(cut, part);
              if (part.n_active_cells() != reference.n_active_cells() ||
                  part.n_vertices() != reference.n_vertices())
                ++n_smaller;
            }
          catch (const ExcMeshFile &)
            {
              ++n_refused;
            }
        }
      std::remove(cut.c_str());
      checks.check(n_smaller == 0 && n_refused > 0,
                   name + ": cut after each of its " +
                     std::to_string(lines.size() - 1) + " first lines, " +
                     std::to_string(n_refused) + " cuts refused and " +
                     std::to_string(n_smaller) +
                     " read as a smaller mesh (must be 0)");
    }

  // Abaqus element sets become material ids in 3D too.
  {
    Triangulation<3> tria;
    const auto       sets = read_abaqus(data_file("Sphere_63_c3d4.inp"), tria);
    bool             materials =
      sets.size() == 2 && sets.at("Core") == 1 && sets.at("Shell") == 2;
    for (const auto &cell : tria.active_cell_iterators())
      materials &=
        cell->material_id() == (cell->active_cell_index() < 60 ? 1 : 2);
    checks.check(materials,
                 "Sphere_63_c3d4.inp: the sets Core and Shell are materials "
                 "1 (elements 1 to 60) and 2");
  }

  // Files that cannot be read are refused in one line.
  const std::string header =
    "DATA\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 4 double\n"
    "0 0 0\n1 0 0\n0 1 0\n0 0 1\n";
  const struct
  {
    std::string name, content, expected, what;
  } refused[] = {
    {"version.vtk",
     "# vtk DataFile Version 6.0\n" + header,
     "VTK file version '6.0' is not supported; save it as legacy VTK 2.0 to "
     "5.1.",
     "a VTK version that does not exist yet"},
    {"binary.vtk",
     "# vtk DataFile Version 4.2\nt\nBINARY\nDATASET UNSTRUCTURED_GRID\n",
     "only ASCII legacy VTK files are read; save it as ASCII, not binary.",
     "a binary VTK file"},
    {"offsets.vtk",
     "# vtk DataFile Version 5.1\nt\nASCII\nDATASET UNSTRUCTURED_GRID\n"
     "POINTS 4 double\n0 0 0\n1 0 0\n0 1 0\n0 0 1\nCELLS 2 4\n"
     "OFFSETS vtktypeint64\n0 4\nCONNECTIVITY vtktypeint64\n0 1 2\n"
     "CELL_TYPES 1\n10\n",
     "CONNECTIVITY holds 3 numbers, but CELLS declares 4",
     "a VTK 5.1 file whose CONNECTIVITY is short"},
    {"hexahedra.inp",
     "*Node\n1, 0, 0, 0\n*Element, type=C3D4\n1, 1, 1, 1, 1\n*Element, "
     "type=C3D8\n2, 1, 1, 1, 1, 1, 1, 1, 1\n",
     "element type 'C3D8' is not a linear tetrahedron (C3D4)",
     "Abaqus tetrahedra mixed with hexahedra"},
    {"part.inp",
     "*Part, name=P\n*Node\n1, 0, 0, 0\n2, 1, 0, 0\n3, 0, 1, 0\n4, 0, 0, "
     "1\n*Element, type=C3D4\n1, 1, 2, 3, 4\n",
     "line 1: the file ends inside this *Part block, without its *End Part: "
     "it is truncated",
     "an Abaqus/CAE part without *End Part"},
    {"elset.inp",
     "*Node\n1, 0, 0, 0\n2, 1, 0, 0\n3, 0, 1, 0\n4, 0, 0, 1\n*Element, "
     "type=C3D4\n1, 1, 2, 3, 4\n*Elset, elset=A, generate\n1, 2\n",
     "the element set 'A' holds element 2, which is not defined",
     "an element set naming an element the file does not hold"},
    {"flat.inp",
     "*Node\n1, 0, 0, 0\n2, 1, 0, 0\n3, 0, 1, 0\n4, 1, 1, 0\n*Element, "
     "type=C3D4\n1, 1, 2, 3, 4\n",
     "element 1 is flat",
     "a flat tetrahedron"}};
  for (const auto &input : refused)
    {
      write_file(input.name, input.content);
      Triangulation<3> tria;
      checks.check_throws<ExcMeshFile>(
        [&]() {
          read_mesh(input.name, tria);
        },
        input.expected,
        "read_mesh: " + input.what + ": \"" + input.expected + "\"");
      std::remove(input.name.c_str());
    }
}



int
main(int argc, char **argv)
{
  if (argc > 1)
    data_directory = argv[1];
  Testing::Checks checks;
  test_reference_meshes(checks);
  test_bad_dat_files(checks);
  test_round_trip<2>("msh", checks);
  test_round_trip<3>("msh", checks);
  test_round_trip<2>("vtk", checks);
  test_round_trip<3>("vtk", checks);
  test_abaqus(checks);
  test_abaqus_element_sets(checks);
  test_other_formats(checks);
  return checks.exit_code();
}
