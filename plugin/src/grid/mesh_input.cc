// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/grid/grid_in.h>
#include <deal.II/grid/grid_tools.h>

#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/grid/mesh_input.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "abaqus_input.h"

namespace GPUAssembly
{
  namespace
  {
    std::string
    extension_of(const std::string &filename)
    {
      const auto dot   = filename.find_last_of('.');
      const auto slash = filename.find_last_of('/');
      if (dot == std::string::npos ||
          (slash != std::string::npos && dot < slash))
        return "";
      return filename.substr(dot + 1);
    }



    // Reads the next line that holds anything but white space, and counts
    // lines so that errors can name them.
    bool
    next_content_line(std::istream &input,
                      std::string  &line,
                      unsigned int &line_number)
    {
      while (std::getline(input, line))
        {
          ++line_number;
          if (line.find_first_not_of(" \t\r") != std::string::npos)
            return true;
        }
      return false;
    }
  } // namespace



  std::string
  MeshFileSummary::describe() const
  {
    if (n_unused_nodes == 0)
      return "";
    return "dropped " + std::to_string(n_unused_nodes) + " of " +
           std::to_string(n_file_nodes) +
           " nodes that no element uses (results keep the order of the "
           "others)";
  }



  MeshFileSummary
  read_dat(std::istream             &input,
           dealii::Triangulation<3> &tria,
           const std::string        &name)
  {
    using namespace dealii;
    std::string  line;
    unsigned int line_number = 0;

    AssertThrow(next_content_line(input, line, line_number),
                ExcMeshFile(name, 0, "the file is empty."));
    {
      std::istringstream header(line);
      std::string        keyword;
      header >> keyword;
      AssertThrow(keyword == "DAT",
                  ExcMeshFile(name,
                              line_number,
                              "expected the keyword 'DAT', found '" + keyword +
                                "'."));
    }

    long n_nodes = -1, n_elements = -1, zero = -1;
    AssertThrow(next_content_line(input, line, line_number),
                ExcMeshFile(name,
                            line_number,
                            "the file ends before the line "
                            "'<n_nodes> <n_elements> 0'."));
    {
      std::istringstream counts(line);
      std::string        rest;
      AssertThrow((counts >> n_nodes >> n_elements >> zero) && zero == 0 &&
                    !(counts >> rest),
                  ExcMeshFile(name,
                              line_number,
                              "expected '<n_nodes> <n_elements> 0', found '" +
                                line + "'."));
      AssertThrow(n_nodes >= 4 && n_elements >= 1,
                  ExcMeshFile(name,
                              line_number,
                              "a mesh needs at least 4 nodes and 1 element; "
                              "the file declares " +
                                std::to_string(n_nodes) + " nodes and " +
                                std::to_string(n_elements) + " elements."));
    }

    // The declared counts are not trusted with memory: storage grows with
    // the lines actually read, so that a corrupt count line ends in an
    // error message rather than in an allocation of its size.
    constexpr long        max_reserve = 1 << 20;
    std::vector<Point<3>> vertices;
    vertices.reserve(std::min(n_nodes, max_reserve));
    for (long n = 0; n < n_nodes; ++n)
      {
        AssertThrow(next_content_line(input, line, line_number),
                    ExcMeshFile(name,
                                line_number,
                                "the file ends after " + std::to_string(n) +
                                  " of " + std::to_string(n_nodes) +
                                  " nodes."));
        std::istringstream coordinates(line);
        std::string        rest;
        double             x, y, z;
        AssertThrow((coordinates >> x >> y >> z) && !(coordinates >> rest) &&
                      std::isfinite(x) && std::isfinite(y) && std::isfinite(z),
                    ExcMeshFile(name,
                                line_number,
                                "node " + std::to_string(n + 1) +
                                  ": expected three finite coordinates, "
                                  "found '" +
                                  line + "'."));
        vertices.emplace_back(x, y, z);
      }

    std::vector<CellData<3>> cells;
    cells.reserve(std::min(n_elements, max_reserve));
    std::vector<bool> node_used(n_nodes, false);
    for (long e = 0; e < n_elements; ++e)
      {
        AssertThrow(next_content_line(input, line, line_number),
                    ExcMeshFile(name,
                                line_number,
                                "the file ends after " + std::to_string(e) +
                                  " of " + std::to_string(n_elements) +
                                  " elements."));
        // A last line without a line break is a file cut within it: its
        // last number may be cut short and still read.
        AssertThrow(!input.eof(),
                    ExcMeshFile(name,
                                line_number,
                                "the file ends within element " +
                                  std::to_string(e + 1) +
                                  "'s line, without a line break: it is "
                                  "truncated."));
        std::istringstream nodes(line);
        std::string        rest;
        long               v[4];
        AssertThrow((nodes >> v[0] >> v[1] >> v[2] >> v[3]) && !(nodes >> rest),
                    ExcMeshFile(name,
                                line_number,
                                "element " + std::to_string(e + 1) +
                                  ": expected four node numbers, found '" +
                                  line + "'."));
        CellData<3> cell(4);
        for (unsigned int i = 0; i < 4; ++i)
          {
            AssertThrow(v[i] >= 1 && v[i] <= n_nodes,
                        ExcMeshFile(name,
                                    line_number,
                                    "element " + std::to_string(e + 1) +
                                      " refers to node " +
                                      std::to_string(v[i]) +
                                      ", but nodes are numbered 1 to " +
                                      std::to_string(n_nodes) + "."));
            for (unsigned int j = 0; j < i; ++j)
              AssertThrow(v[i] != v[j],
                          ExcMeshFile(name,
                                      line_number,
                                      "element " + std::to_string(e + 1) +
                                        " uses node " + std::to_string(v[i]) +
                                        " twice."));
            cell.vertices[i]    = v[i] - 1;
            node_used[v[i] - 1] = true;
          }

        const Point<3> &a = vertices[v[0] - 1];
        Tensor<2, 3>    edges;
        for (unsigned int j = 0; j < 3; ++j)
          for (unsigned int k = 0; k < 3; ++k)
            edges[k][j] = vertices[v[j + 1] - 1][k] - a[k];
        const double det = determinant(edges);
        AssertThrow(
          det > 0.,
          ExcMeshFile(name,
                      line_number,
                      "element " + std::to_string(e + 1) +
                        " is inverted or flat: det[b-a, c-a, d-a] = " +
                        std::to_string(det) + " (it must be positive)."));
        cells.push_back(cell);
      }
    AssertThrow(!next_content_line(input, line, line_number),
                ExcMeshFile(name,
                            line_number,
                            "unexpected content after the last element: '" +
                              line + "'."));

    // deal.II refuses vertices no cell uses: drop them, keeping the
    // order of the others, and say which file node each vertex is.
    MeshFileSummary summary;
    summary.n_file_nodes = n_nodes;
    std::vector<unsigned int> new_index(n_nodes);
    std::vector<Point<3>>     used_vertices;
    used_vertices.reserve(vertices.size());
    for (long n = 0; n < n_nodes; ++n)
      if (node_used[n])
        {
          new_index[n] = used_vertices.size();
          used_vertices.push_back(vertices[n]);
          summary.file_node_of_vertex.push_back(n + 1);
        }
    summary.n_unused_nodes = n_nodes - used_vertices.size();
    if (summary.n_unused_nodes > 0)
      for (auto &cell : cells)
        for (auto &v : cell.vertices)
          v = new_index[v];

    tria.clear();
    tria.create_triangulation(used_vertices, cells, SubCellData());
    return summary;
  }



  namespace
  {
    // Counts that a header declares are checked against the file's size
    // before deal.II's GridIn sizes arrays by them: a corrupt count ends in
    // a message, not in an allocation of its size. Every node or cell takes
    // at least two bytes of text.
    // Every Gmsh section "$Name" must end with its "$EndName" line (Gmsh 1:
    // "$NOD" with "$ENDNOD"): deal.II's GridIn reads some sections until
    // their end line and would not stop at the end of a damaged file.
    void
    check_gmsh_sections(std::istream &input, const std::string &filename)
    {
      std::string  line, open_section;
      unsigned int line_number = 0, open_line = 0;
      while (std::getline(input, line))
        {
          ++line_number;
          const auto end = line.find_last_not_of(" \t\r");
          line = end == std::string::npos ? "" : line.substr(0, end + 1);
          if (line.empty() || line[0] != '$')
            continue;
          const bool is_end =
            line.rfind("$End", 0) == 0 || line.rfind("$END", 0) == 0;
          if (!is_end)
            {
              AssertThrow(open_section.empty(),
                          ExcMeshFile(filename,
                                      line_number,
                                      "the section " + open_section +
                                        " of line " +
                                        std::to_string(open_line) +
                                        " has no end line before '" + line +
                                        "': the file is damaged."));
              open_section = line;
              open_line    = line_number;
              continue;
            }
          const std::string name =
            open_section.substr(std::min<std::size_t>(1, open_section.size()));
          AssertThrow(!open_section.empty() &&
                        (line == "$End" + name || line == "$END" + name),
                      ExcMeshFile(filename,
                                  line_number,
                                  "'" + line + "' does not close " +
                                    (open_section.empty() ?
                                       std::string("any section") :
                                       "the section " + open_section +
                                         " of line " +
                                         std::to_string(open_line)) +
                                    ": the file is damaged."));
          open_section.clear();
        }
      AssertThrow(open_section.empty(),
                  ExcMeshFile(filename,
                              open_line,
                              "the section " + open_section +
                                " has no end line: the file is damaged or "
                                "truncated."));
      input.clear();
      input.seekg(0);
    }



    // The records of Gmsh 2 (and 1) $Nodes and $Elements sections, each
    // on its line: deal.II's GridIn reads them as one stream of numbers, so
    // a missing or malformed number shifts everything after it and may not
    // end. Nodes: "id x y z" with finite coordinates; elements: integers
    // "id type n_tags tags... nodes..." with the type's number of nodes,
    // each a node defined before.
    void
    check_gmsh_2_records(std::istream &input, const std::string &filename)
    {
      const std::map<long, unsigned int> nodes_of_type =
        {{1, 2}, {2, 3}, {3, 4}, {4, 4}, {5, 8}, {6, 6}, {7, 5}, {15, 1}};
      std::set<long> node_ids;
      std::string    line, section;
      unsigned int   line_number = 0;
      long           remaining   = -1;
      const auto     fail        = [&](const std::string &what) {
        AssertThrow(false,
                    ExcMeshFile(filename,
                                line_number,
                                what + ", found '" + line + "'."));
      };
      while (std::getline(input, line))
        {
          ++line_number;
          std::istringstream words(line);
          std::string        first;
          words >> first;
          if (first == "$Nodes" || first == "$NOD" || first == "$Elements" ||
              first == "$ELM")
            {
              section   = first == "$Nodes" || first == "$NOD" ? "n" :
                          first == "$ELM"                      ? "e1" :
                                                                 "e";
              remaining = -1;
              continue;
            }
          if (first.rfind("$", 0) == 0)
            {
              if (!section.empty() && remaining > 0)
                fail("the section ends " + std::to_string(remaining) +
                     " records early");
              section.clear();
              continue;
            }
          if (section.empty())
            continue;
          if (remaining < 0)
            {
              remaining = std::atol(first.c_str());
              continue;
            }
          if (remaining == 0)
            fail("more records than the section's count");
          --remaining;
          std::vector<std::string> tokens;
          words.clear();
          words.str(line);
          for (std::string token; words >> token;)
            tokens.push_back(token);
          const auto integer = [&](const std::string &text) {
            char *end        = nullptr;
            errno            = 0;
            const long value = std::strtol(text.c_str(), &end, 10);
            if (text.empty() || *end != '\0' || errno == ERANGE)
              fail("expected integers");
            return value;
          };
          if (section == "n")
            {
              if (tokens.size() != 4)
                fail("expected a node 'id x y z'");
              node_ids.insert(integer(tokens[0]));
              for (unsigned int d = 1; d < 4; ++d)
                {
                  char        *end   = nullptr;
                  const double value = std::strtod(tokens[d].c_str(), &end);
                  if (*end != '\0' || !std::isfinite(value))
                    fail("expected a node 'id x y z' with finite "
                         "coordinates");
                }
            }
          else
            {
              std::vector<long> v;
              for (const auto &token : tokens)
                v.push_back(integer(token));
              // Gmsh 2: id type n_tags tags... nodes...; Gmsh 1: id type
              // physical elementary n_nodes nodes...
              const bool        v1 = section == "e1";
              const std::size_t first_node =
                v1 ? 5 : 3 + std::size_t(std::max(0L, v.size() > 2 ? v[2] : 0));
              if (v.size() < (v1 ? 5 : 3) || (!v1 && v[2] < 0) ||
                  v.size() < first_node ||
                  (v1 &&
                   v.size() != first_node + std::size_t(std::max(0L, v[4]))))
                fail(v1 ? "expected an element 'id type physical elementary "
                          "n_nodes nodes...'" :
                          "expected an element 'id type n_tags tags... "
                          "nodes...'");
              const auto type = nodes_of_type.find(v[1]);
              if (type != nodes_of_type.end() &&
                  v.size() != first_node + type->second)
                fail("expected " + std::to_string(type->second) +
                     " nodes for an element of type " + std::to_string(v[1]));
              for (std::size_t i = first_node; i < v.size(); ++i)
                if (node_ids.count(v[i]) == 0)
                  fail("the element refers to node " + std::to_string(v[i]) +
                       ", which is not defined");
            }
        }
      input.clear();
      input.seekg(0);
    }



    // The POINTS, CELLS and CELL_TYPES sections of a legacy VTK file:
    // deal.II's GridIn trusts each cell's vertex count and indices, and a
    // damaged record makes it read out of bounds.
    void
    check_vtk_records(std::istream &input, const std::string &filename)
    {
      const std::map<long, long> vertices_of_type =
        {{1, 1}, {3, 2}, {5, 3}, {9, 4}, {10, 4}, {12, 8}, {13, 6}, {14, 5}};
      std::vector<std::string> tokens;
      for (std::string token; input >> token;)
        tokens.push_back(token);
      input.clear();
      input.seekg(0);
      const auto fail = [&](const std::string &what) {
        AssertThrow(false, ExcMeshFile(filename, 0, what + "."));
      };
      const auto integer = [&](const std::size_t i) {
        if (i >= tokens.size())
          fail("the file ends within its POINTS, CELLS or CELL_TYPES data");
        char *end        = nullptr;
        errno            = 0;
        const long value = std::strtol(tokens[i].c_str(), &end, 10);
        if (*end != '\0' || errno == ERANGE || tokens[i].empty())
          fail("expected an integer, found '" + tokens[i] + "'");
        return value;
      };
      long              n_points = -1, n_cells = -1;
      std::vector<long> cell_sizes;
      for (std::size_t i = 0; i < tokens.size(); ++i)
        {
          if (tokens[i] == "POINTS")
            {
              n_points = integer(i + 1);
              i += 2;
              for (long k = 0; k < 3 * n_points; ++k)
                {
                  if (i + 1 + k >= tokens.size())
                    fail("the file ends within its " +
                         std::to_string(n_points) + " POINTS");
                  char        *end = nullptr;
                  const double value =
                    std::strtod(tokens[i + 1 + k].c_str(), &end);
                  if (*end != '\0' || !std::isfinite(value))
                    fail("POINTS: expected a finite coordinate, found '" +
                         tokens[i + 1 + k] + "'");
                }
              i += 3 * n_points;
            }
          else if (tokens[i] == "CELLS")
            {
              n_cells           = integer(i + 1);
              const long  total = integer(i + 2);
              std::size_t j     = i + 3;
              for (long c = 0; c < n_cells; ++c)
                {
                  const long k = integer(j);
                  if (k < 1 || k > 27)
                    fail("CELLS: cell " + std::to_string(c) + " has " +
                         std::to_string(k) + " vertices");
                  for (long v = 1; v <= k; ++v)
                    {
                      const long index = integer(j + v);
                      if (index < 0 || index >= n_points)
                        fail("CELLS: cell " + std::to_string(c) +
                             " refers to point " + std::to_string(index) +
                             ", but there are " + std::to_string(n_points) +
                             " points");
                    }
                  cell_sizes.push_back(k);
                  j += k + 1;
                }
              if (long(j - (i + 3)) != total)
                fail("CELLS declares " + std::to_string(total) +
                     " numbers, its cells hold " + std::to_string(j - (i + 3)));
              i = j - 1;
            }
          else if (tokens[i] == "CELL_TYPES")
            {
              const long n = integer(i + 1);
              if (n != n_cells)
                fail("CELL_TYPES has " + std::to_string(n) + " entries for " +
                     std::to_string(n_cells) + " cells");
              for (long c = 0; c < n; ++c)
                {
                  const long type = integer(i + 2 + c);
                  const auto it   = vertices_of_type.find(type);
                  if (it != vertices_of_type.end() &&
                      it->second != cell_sizes[c])
                    fail("cell " + std::to_string(c) + " of type " +
                         std::to_string(type) + " needs " +
                         std::to_string(it->second) + " vertices, not " +
                         std::to_string(cell_sizes[c]));
                }
              i += 1 + n;
            }
          else if (tokens[i] == "CELL_DATA" || tokens[i] == "POINT_DATA")
            {
              const long n = integer(i + 1);
              if (n != (tokens[i] == "CELL_DATA" ? n_cells : n_points))
                fail(tokens[i] + " has " + std::to_string(n) +
                     " entries, not one per " +
                     (tokens[i] == "CELL_DATA" ? "cell" : "point"));
            }
        }
    }



    void
    check_declared_counts(std::istream      &input,
                          const std::string &extension,
                          const std::string &filename)
    {
      input.seekg(0, std::ios::end);
      const std::streamoff size = input.tellg();
      input.seekg(0);
      std::string  line;
      unsigned int line_number   = 0;
      bool         next_is_count = false;
      bool         gmsh_4        = false;
      const auto   check         = [&](const std::string &text,
                             const std::string &what,
                             const std::string &found) {
        std::istringstream count_stream(text);
        double             count = -1;
        count_stream >> count;
        AssertThrow(count_stream && count >= 0 && count == std::floor(count),
                    ExcMeshFile(filename,
                                line_number,
                                "expected the number of " + what + ", found '" +
                                  found + "'."));
        AssertThrow(2 * count <= double(size),
                    ExcMeshFile(filename,
                                line_number,
                                "the file declares " + text + " " + what +
                                  ", more than its " + std::to_string(size) +
                                  " bytes can hold: it is damaged or "
                                            "truncated."));
      };
      std::string section;
      while (std::getline(input, line))
        {
          ++line_number;
          std::istringstream words(line);
          std::string        keyword;
          words >> keyword;
          if (extension == "msh")
            {
              if (keyword == "$MeshFormat")
                {
                  std::getline(input, line);
                  ++line_number;
                  std::istringstream version(line);
                  double             v = 0;
                  version >> v;
                  gmsh_4 = v >= 4;
                }
              else if (keyword == "$Nodes" || keyword == "$Elements" ||
                       keyword == "$NOD" || keyword == "$ELM")
                {
                  section       = keyword == "$Nodes" || keyword == "$NOD" ?
                                    "nodes" :
                                    "elements";
                  next_is_count = true;
                }
              else if (next_is_count)
                {
                  // Gmsh 4: "numEntityBlocks numNodes minTag maxTag".
                  std::string first, second;
                  words.clear();
                  words.str(line);
                  words >> first >> second;
                  check(gmsh_4 ? second : first, section, line);
                  next_is_count = false;
                }
            }
          else if (extension == "vtk")
            {
              if (keyword == "POINTS" || keyword == "CELLS" ||
                  keyword == "CELL_TYPES" || keyword == "CELL_DATA" ||
                  keyword == "POINT_DATA")
                {
                  std::string count;
                  words >> count;
                  check(count,
                        keyword == "POINTS" || keyword == "POINT_DATA" ?
                          "points" :
                          "cells",
                        line);
                }
            }
        }
      input.clear();
      input.seekg(0);
      if (extension == "msh")
        {
          check_gmsh_sections(input, filename);
          if (!gmsh_4)
            check_gmsh_2_records(input, filename);
        }
      if (extension == "vtk")
        check_vtk_records(input, filename);
    }



    // A legacy VTK file in the form deal.II 9.4's GridIn reads: the header
    // of version 3.0, the cells as CELLS records "n v0 v1 ...". Versions 2.0
    // to 4.2 hold their cells so already; 5.1 writes them as two arrays,
    // OFFSETS (n_cells + 1 entries) and CONNECTIVITY, which are turned into
    // records. The METADATA blocks of 4.x and 5.x (information keys, up to
    // an empty line) are dropped. Binary files and other data sets are
    // refused with one line.
    std::string
    legacy_vtk_for_grid_in(std::istream &input, const std::string &filename)
    {
      std::vector<std::string> lines;
      for (std::string line; std::getline(input, line);)
        {
          if (!line.empty() && line.back() == '\r')
            line.pop_back();
          lines.push_back(line);
        }
      input.clear();
      input.seekg(0);
      const auto refuse = [&](const unsigned int line,
                              const std::string &what) {
        AssertThrow(false, ExcMeshFile(filename, line, what));
      };
      const std::string prefix = "# vtk DataFile Version ";
      if (lines.empty() || lines[0].rfind(prefix, 0) != 0)
        refuse(1,
               "a legacy VTK file starts with '# vtk DataFile Version x.y'.");
      const std::string version = lines[0].substr(prefix.size());
      const double      number  = std::atof(version.c_str());
      if (!(number >= 2 && number < 6))
        refuse(1,
               "VTK file version '" + version +
                 "' is not supported; save it as legacy VTK 2.0 to 5.1.");
      if (lines.size() < 4 || lines[2] != "ASCII")
        refuse(3,
               "only ASCII legacy VTK files are read; save it as ASCII, "
               "not binary.");
      if (lines[3] != "DATASET UNSTRUCTURED_GRID")
        refuse(4,
               "only unstructured grids (DATASET UNSTRUCTURED_GRID) are "
               "read, found '" +
                 lines[3] + "'.");

      std::ostringstream out;
      out << "# vtk DataFile Version 3.0\n";
      for (std::size_t i = 1; i < lines.size(); ++i)
        {
          std::istringstream words(lines[i]);
          std::string        keyword;
          words >> keyword;
          if (keyword == "METADATA")
            {
              while (i + 1 < lines.size() &&
                     lines[i + 1].find_first_not_of(" \t") != std::string::npos)
                ++i;
              continue;
            }
          if (keyword != "CELLS" || i + 1 >= lines.size() ||
              lines[i + 1].rfind("OFFSETS", 0) != 0)
            {
              out << lines[i] << '\n';
              continue;
            }
          // VTK 5.1: CELLS n_offsets n_connectivity, then the two arrays.
          long n_offsets = -1, n_connectivity = -1;
          words >> n_offsets >> n_connectivity;
          const unsigned int cells_line = i + 1;
          if (!words || n_offsets < 1 || n_connectivity < 0)
            refuse(cells_line,
                   "expected 'CELLS n_offsets n_connectivity', found '" +
                     lines[i] + "'.");
          // The numbers after a keyword line, up to the next keyword.
          std::size_t j     = i + 2;
          const auto  array = [&](const std::string &name, const long n) {
            std::vector<long> values;
            for (; j < lines.size() && values.size() < std::size_t(n); ++j)
              {
                // The next keyword ends the array.
                const auto first = lines[j].find_first_not_of(" \t");
                if (first != std::string::npos &&
                    std::isalpha(static_cast<unsigned char>(lines[j][first])))
                  break;
                std::istringstream numbers(lines[j]);
                for (std::string token; numbers >> token;)
                  {
                    char *end        = nullptr;
                    errno            = 0;
                    const long value = std::strtol(token.c_str(), &end, 10);
                    if (*end != '\0' || errno == ERANGE)
                      refuse(j + 1,
                             name + ": expected an integer, found '" + token +
                               "'.");
                    values.push_back(value);
                  }
              }
            if (values.size() != std::size_t(n))
              refuse(j,
                     name + " holds " + std::to_string(values.size()) +
                       " numbers, but CELLS declares " + std::to_string(n) +
                       ": the file is damaged or truncated.");
            return values;
          };
          const std::vector<long> offsets = array("OFFSETS", n_offsets);
          if (j >= lines.size() || lines[j].rfind("CONNECTIVITY", 0) != 0)
            refuse(j + 1, "expected CONNECTIVITY after the OFFSETS array.");
          ++j;
          const std::vector<long> connectivity =
            array("CONNECTIVITY", n_connectivity);
          if (offsets[0] != 0 || offsets.back() != n_connectivity)
            refuse(cells_line,
                   "OFFSETS must run from 0 to the CONNECTIVITY's length " +
                     std::to_string(n_connectivity) + ".");
          for (long c = 0; c + 1 < n_offsets; ++c)
            if (offsets[c + 1] < offsets[c])
              refuse(cells_line,
                     "OFFSETS decrease at cell " + std::to_string(c) + ".");
          out << "CELLS " << n_offsets - 1 << ' '
              << n_offsets - 1 + n_connectivity << '\n';
          for (long c = 0; c + 1 < n_offsets; ++c)
            {
              out << offsets[c + 1] - offsets[c];
              for (long k = offsets[c]; k < offsets[c + 1]; ++k)
                out << ' ' << connectivity[k];
              out << '\n';
            }
          i = j - 1;
        }
      return out.str();
    }



    // What the *Element blocks of an Abaqus file hold, found in one pass.
    struct AbaqusElements
    {
      // An *Element line followed by a data line. deal.II's GridIn asserts
      // (in a debug build: aborts) on a file without one instead of
      // throwing.
      bool any = false;
      // An *Element line of type C3D4, which deal.II 9.4's GridIn does not
      // read.
      bool tetrahedra = false;
    };

    AbaqusElements
    scan_abaqus_elements(std::istream &input)
    {
      AbaqusElements found;
      bool           in_elements = false;
      for (std::string line; std::getline(input, line);)
        {
          const std::size_t first = line.find_first_not_of(" \t\r");
          if (first == std::string::npos || line.compare(first, 2, "**") == 0)
            continue;
          if (line[first] != '*')
            {
              found.any = found.any || in_elements;
              continue;
            }
          std::string compact;
          for (const char c : line.substr(first))
            if (c != ' ' && c != '\t' && c != '\r')
              compact += std::toupper(static_cast<unsigned char>(c));
          in_elements = compact.rfind("*ELEMENT", 0) == 0 &&
                        (compact.size() == 8 || compact[8] == ',');
          found.tetrahedra = found.tetrahedra ||
                             (compact.rfind("*ELEMENT,", 0) == 0 &&
                              compact.find("TYPE=C3D4") != std::string::npos);
        }
      input.clear();
      input.seekg(0);
      return found;
    }



    // An Abaqus file declares no counts: a file cut within its last data
    // line (no line break after it) would read a number cut short.
    void
    check_last_line_complete(std::istream &input, const std::string &filename)
    {
      std::string  line, last;
      unsigned int line_number = 0, last_number = 0;
      bool         terminated = true;
      while (std::getline(input, line))
        {
          ++line_number;
          terminated = !input.eof();
          if (line.find_first_not_of(" \t\r") != std::string::npos)
            {
              last        = line.substr(line.find_first_not_of(" \t\r"));
              last_number = line_number;
            }
        }
      input.clear();
      input.seekg(0);
      AssertThrow(terminated || last.empty() || last[0] == '*',
                  ExcMeshFile(filename,
                              last_number,
                              "the file ends within this data line, without "
                              "a line break: it is truncated."));
    }



    // Reads @p input with deal.II's GridIn into @p tria; exceptions other
    // than ExcMeshFile become an ExcMeshFile naming the file.
    template <int dim>
    void
    read_with_grid_in(std::istream               &input,
                      const std::string          &extension,
                      const std::string          &filename,
                      dealii::Triangulation<dim> &tria)
    {
      using namespace dealii;
      GridIn<dim> grid_in;
      grid_in.attach_triangulation(tria);
      if (extension == "msh")
        grid_in.read_msh(input);
      else if (extension == "inp")
        grid_in.read_abaqus(input);
      else if (extension == "vtk")
        grid_in.read_vtk(input);
      else
        AssertThrow(false,
                    ExcMeshFile(filename,
                                0,
                                "unknown extension '." + extension +
                                  "'; supported are .msh (Gmsh), .inp "
                                  "(Abaqus), .vtk (VTK) and .dat."));
    }



    // Nodes a .msh or .vtk file declares (0 where the format has no
    // count), to say how many deal.II dropped as unused.
    std::size_t
    declared_nodes(std::istream &input, const std::string &extension)
    {
      input.clear();
      input.seekg(0);
      std::string line;
      std::size_t result = 0;
      bool        gmsh_4 = false, next_is_count = false;
      while (std::getline(input, line))
        {
          std::istringstream words(line);
          std::string        keyword;
          words >> keyword;
          if (extension == "vtk" && keyword == "POINTS")
            {
              words >> result;
              break;
            }
          if (extension != "msh")
            continue;
          if (next_is_count)
            {
              std::size_t first = 0, second = 0;
              words.clear();
              words.str(line);
              words >> first >> second;
              result = gmsh_4 ? second : first;
              break;
            }
          if (keyword == "$MeshFormat" && std::getline(input, line))
            gmsh_4 = std::atof(line.c_str()) >= 4;
          next_is_count = keyword == "$Nodes" || keyword == "$NOD";
        }
      input.clear();
      input.seekg(0);
      return result;
    }
  } // namespace



  template <int dim>
  MeshFileSummary
  read_mesh(const std::string &filename, dealii::Triangulation<dim> &tria)
  {
    using namespace dealii;
    std::ifstream input(filename, std::ios::binary);
    AssertThrow(input.good(),
                ExcMeshFile(filename, 0, "the file cannot be opened."));
    AssertThrow(input.peek() != std::ifstream::traits_type::eof(),
                ExcMeshFile(filename, 0, "the file is empty."));

    const std::string extension = extension_of(filename);
    if (extension == "dat")
      {
        if constexpr (dim == 3)
          {
            Triangulation<3>      new_tria;
            const MeshFileSummary summary = read_dat(input, new_tria, filename);
            tria.clear();
            tria.copy_triangulation(new_tria);
            return summary;
          }
        else
          AssertThrow(false,
                      ExcMeshFile(filename,
                                  0,
                                  "the .dat format holds 3D tetrahedral "
                                  "meshes; it cannot be read in " +
                                    std::to_string(dim) + "D."));
      }
    AssertThrow(extension == "msh" || extension == "inp" || extension == "vtk",
                ExcMeshFile(filename,
                            0,
                            "unknown extension '." + extension +
                              "'; supported are .msh (Gmsh), .inp "
                              "(Abaqus), .vtk (VTK) and .dat."));
    if (extension == "inp")
      {
        check_last_line_complete(input, filename);
        internal::check_abaqus_structure(input, filename);
        const AbaqusElements elements = scan_abaqus_elements(input);
        AssertThrow(elements.any,
                    ExcMeshFile(filename,
                                0,
                                "the file holds no elements (no *Element "
                                "block with element lines): there is no "
                                "mesh to read."));
        if constexpr (dim == 3)
          if (elements.tetrahedra)
            {
              Triangulation<3> new_tria;
              MeshFileSummary  summary;
              read_abaqus(input, new_tria, filename, &summary);
              tria.clear();
              tria.copy_triangulation(new_tria);
              return summary;
            }
      }
    // deal.II's GridIn reads legacy VTK 3.0 only: other versions are read
    // from a converted copy.
    std::istringstream converted;
    std::istream      &in =
      extension == "vtk" ? static_cast<std::istream &>(converted) : input;
    if (extension == "vtk")
      converted.str(legacy_vtk_for_grid_in(input, filename));
    check_declared_counts(in, extension, filename);

    // Read into a scratch triangulation so that a failure leaves the
    // caller's triangulation as it was.
    Triangulation<dim> new_tria;
    try
      {
        read_with_grid_in(in, extension, filename, new_tria);
      }
    catch (const ExcMeshFile &)
      {
        throw;
      }
    catch (const std::exception &exc)
      {
        // A mesh of the other dimension fails in ways that name a vertex
        // or a cell type: say what is wrong instead.
        constexpr int other         = dim == 2 ? 3 : 2;
        unsigned int  n_other_cells = 0;
        try
          {
            in.clear();
            in.seekg(0);
            Triangulation<other> other_tria;
            read_with_grid_in(in, extension, filename, other_tria);
            n_other_cells = other_tria.n_active_cells();
          }
        catch (...)
          {}
        AssertThrow(n_other_cells == 0,
                    ExcMeshFile(filename,
                                0,
                                "the file holds a " + std::to_string(other) +
                                  "D mesh (" + std::to_string(n_other_cells) +
                                  " cells), but this program needs a " +
                                  std::to_string(dim) + "D one."));
        AssertThrow(false,
                    ExcMeshFile(filename,
                                0,
                                std::string("deal.II's GridIn could not read "
                                            "it:\n") +
                                  exc.what()));
      }
    AssertThrow(new_tria.n_active_cells() > 0,
                ExcMeshFile(filename, 0, "the mesh has no cells."));
    MeshFileSummary summary;
    summary.n_file_nodes = declared_nodes(in, extension);
    if (summary.n_file_nodes > new_tria.n_vertices())
      summary.n_unused_nodes = summary.n_file_nodes - new_tria.n_vertices();
    else
      summary.n_file_nodes = new_tria.n_vertices();
    tria.clear();
    tria.copy_triangulation(new_tria);
    return summary;
  }

  template MeshFileSummary
  read_mesh(const std::string &, dealii::Triangulation<2> &);
  template MeshFileSummary
  read_mesh(const std::string &, dealii::Triangulation<3> &);
} // namespace GPUAssembly
