// SPDX-License-Identifier: LGPL-2.1-or-later
#include "abaqus_input.h"

#include <deal.II/base/tensor.h>

#include <deal.II/grid/grid_tools.h>

#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/grid/mesh_input.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace GPUAssembly
{
  using namespace dealii;

  namespace
  {
    std::string
    upper(std::string text)
    {
      for (char &c : text)
        c = std::toupper(static_cast<unsigned char>(c));
      return text;
    }

    std::string
    trim(const std::string &text)
    {
      const auto first = text.find_first_not_of(" \t\r");
      if (first == std::string::npos)
        return "";
      return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
    }

    // Value of "key=value" among the comma-separated options of a
    // keyword line, or "" (keys compared without case).
    std::string
    option(const std::string &line, const std::string &key)
    {
      std::stringstream stream(line);
      std::string       item;
      while (std::getline(stream, item, ','))
        {
          const auto equal = item.find('=');
          if (equal != std::string::npos &&
              upper(trim(item.substr(0, equal))) == key)
            return trim(item.substr(equal + 1));
        }
      return "";
    }

    // The blocks of an Abaqus/CAE input file that must be closed: a file
    // that ends inside one was cut short, even at a line break (Abaqus
    // files declare no counts that would tell).
    class BlockStructure
    {
    public:
      BlockStructure(const std::string &name)
        : name(name)
      {}

      // A keyword line (upper case, without the '*').
      void
      keyword(const std::string &keyword, const unsigned int line_number)
      {
        static const char *const blocks[] = {"PART",
                                             "ASSEMBLY",
                                             "INSTANCE",
                                             "STEP"};
        for (const char *block : blocks)
          {
            if (keyword == block)
              open.emplace_back(block, line_number);
            else if (keyword == std::string("END ") + block)
              {
                AssertThrow(!open.empty() && open.back().first == block,
                            ExcMeshFile(name,
                                        line_number,
                                        "*End " + lower_case(block) +
                                          " without its *" +
                                          lower_case(block)));
                open.pop_back();
              }
          }
      }

      // At the end of the file.
      void
      finish() const
      {
        AssertThrow(
          open.empty(),
          ExcMeshFile(
            name,
            open.empty() ? 0 : open.back().second,
            "the file ends inside this *" +
              (open.empty() ? std::string() : lower_case(open.back().first)) +
              " block, without its *End " +
              (open.empty() ? std::string() : lower_case(open.back().first)) +
              ": it is truncated"));
      }

    private:
      static std::string
      lower_case(const std::string &block)
      {
        std::string result = block;
        for (std::size_t i = 1; i < result.size(); ++i)
          result[i] = std::tolower(static_cast<unsigned char>(result[i]));
        return result;
      }

      const std::string                                 name;
      std::vector<std::pair<std::string, unsigned int>> open;
    };

    // The keyword of a keyword line ("*Element, type=C3D4" -> "ELEMENT"),
    // white space inside it made one space ("*End  Part" -> "END PART").
    std::string
    keyword_of(const std::string &line)
    {
      std::istringstream words(upper(line.substr(1, line.find(',') - 1)));
      std::string        result, word;
      while (words >> word)
        result += (result.empty() ? "" : " ") + word;
      return result;
    }

    std::vector<std::string>
    fields(const std::string &line)
    {
      std::vector<std::string> result;
      std::stringstream        stream(line);
      std::string              item;
      while (std::getline(stream, item, ','))
        if (!trim(item).empty())
          result.push_back(trim(item));
      return result;
    }
  } // namespace



  namespace
  {
    // Whether Abaqus element @p type is a cell of the reader in @p dim
    // dimensions, and its number of nodes (0 if not).
    unsigned int
    nodes_of_element_type(const std::string &type, const int dim)
    {
      if (dim == 3)
        return type.rfind("C3D4", 0) == 0 ? 4 : 0;
      const bool triangle =
        type.find('3') != std::string::npos &&
        (type.rfind("CPS", 0) == 0 || type.rfind("CPE", 0) == 0 ||
         type.rfind("S3", 0) == 0 || type.rfind("CAX", 0) == 0 ||
         type.rfind("R3", 0) == 0 || type.rfind("M3D3", 0) == 0);
      const bool quad =
        type.find('4') != std::string::npos &&
        (type.rfind("CPS", 0) == 0 || type.rfind("CPE", 0) == 0 ||
         type.rfind("S4", 0) == 0 || type.rfind("CAX", 0) == 0 ||
         type.rfind("R3D4", 0) == 0 || type.rfind("M3D4", 0) == 0);
      return triangle ? 3 : quad ? 4 : 0;
    }



    template <int dim>
    std::map<std::string, types::material_id>
    read_abaqus_cells(std::istream       &input,
                      Triangulation<dim> &tria,
                      const std::string  &name,
                      MeshFileSummary    *summary)
    {
      std::map<long, unsigned int>             vertex_index;
      std::vector<Point<dim>>                  vertices;
      std::map<long, std::vector<long>>        elements; // by number
      std::vector<long>                        element_order;
      std::vector<std::string>                 set_names;
      std::map<std::string, std::vector<long>> sets;
      enum class Block
      {
        none,
        node,
        element,
        elset,
        elset_generate
      };
      Block          block = Block::none;
      std::string    current_set;
      unsigned int   nodes_per_element = 0;
      std::string    line;
      unsigned int   line_number = 0;
      BlockStructure structure(name);

      const auto add_set = [&](const std::string &set) {
        if (sets.find(set) == sets.end())
          {
            set_names.push_back(set);
            sets[set] = {};
          }
      };
      const auto number = [&](const std::string &text) {
        char *end        = nullptr;
        errno            = 0;
        const long value = std::strtol(text.c_str(), &end, 10);
        AssertThrow(
          !text.empty() && end == text.c_str() + text.size() && errno != ERANGE,
          ExcMeshFile(name, line_number, "'" + text + "' is not an integer"));
        return value;
      };
      // A coordinate is the longest number at the start of its field.
      const auto coordinate = [&](const std::string &text) {
        char *end          = nullptr;
        errno              = 0;
        const double value = std::strtod(text.c_str(), &end);
        AssertThrow(end != text.c_str() && errno != ERANGE &&
                      std::isfinite(value),
                    ExcMeshFile(name,
                                line_number,
                                "malformed coordinates: '" + text +
                                  "' is not a finite number"));
        return value;
      };

      while (std::getline(input, line))
        {
          ++line_number;
          line = trim(line);
          if (line.empty() || line.rfind("**", 0) == 0)
            continue;
          // The file declares no counts: one cut within its last data line
          // (no line break after it) would read a number cut short.
          AssertThrow(!input.eof() || line[0] == '*',
                      ExcMeshFile(name,
                                  line_number,
                                  "the file ends within this data line, "
                                  "without a line break: it is truncated"));
          if (line[0] == '*')
            {
              const std::string keyword = keyword_of(line);
              structure.keyword(keyword, line_number);
              block = Block::none;
              if (keyword == "NODE")
                block = Block::node;
              else if (keyword == "ELEMENT")
                {
                  const std::string  type = upper(option(line, "TYPE"));
                  const unsigned int n    = nodes_of_element_type(type, dim);
                  AssertThrow(n > 0,
                              ExcMeshFile(name,
                                          line_number,
                                          "element type '" + type +
                                            (dim == 2 ?
                                               "' is not a linear triangle or "
                                               "bilinear quadrilateral" :
                                               "' is not a linear tetrahedron "
                                               "(C3D4)")));
                  AssertThrow(nodes_per_element == 0 || nodes_per_element == n,
                              ExcMeshFile(name,
                                          line_number,
                                          "triangles and quadrilaterals are "
                                          "mixed; the wave solver needs "
                                          "one cell type"));
                  nodes_per_element = n;
                  block             = Block::element;
                  current_set       = option(line, "ELSET");
                  if (!current_set.empty())
                    add_set(current_set);
                }
              else if (keyword == "ELSET")
                {
                  current_set = option(line, "ELSET");
                  AssertThrow(!current_set.empty(),
                              ExcMeshFile(name,
                                          line_number,
                                          "*Elset without a name"));
                  add_set(current_set);
                  block = upper(line).find("GENERATE") != std::string::npos ?
                            Block::elset_generate :
                            Block::elset;
                }
              continue;
            }

          const std::vector<std::string> f = fields(line);
          switch (block)
            {
              case Block::node:
                {
                  AssertThrow(f.size() >= dim + 1,
                              ExcMeshFile(name,
                                          line_number,
                                          std::string("a node needs a number "
                                                      "and ") +
                                            (dim == 2 ? "two" : "three") +
                                            " coordinates"));
                  const long id = number(f[0]);
                  Point<dim> p;
                  for (unsigned int d = 0; d < dim; ++d)
                    p[d] = coordinate(f[d + 1]);
                  AssertThrow(vertex_index.find(id) == vertex_index.end(),
                              ExcMeshFile(name,
                                          line_number,
                                          "node " + std::to_string(id) +
                                            " is defined twice"));
                  vertex_index[id] = vertices.size();
                  vertices.push_back(p);
                  break;
                }
              case Block::element:
                {
                  AssertThrow(f.size() == nodes_per_element + 1,
                              ExcMeshFile(name,
                                          line_number,
                                          "expected an element number and " +
                                            std::to_string(nodes_per_element) +
                                            " nodes"));
                  const long        id = number(f[0]);
                  std::vector<long> nodes;
                  for (unsigned int i = 1; i < f.size(); ++i)
                    nodes.push_back(number(f[i]));
                  AssertThrow(elements.find(id) == elements.end(),
                              ExcMeshFile(name,
                                          line_number,
                                          "element " + std::to_string(id) +
                                            " is defined twice"));
                  elements[id] = nodes;
                  element_order.push_back(id);
                  if (!current_set.empty())
                    sets[current_set].push_back(id);
                  break;
                }
              case Block::elset:
                for (const std::string &item : f)
                  sets[current_set].push_back(number(item));
                break;
              case Block::elset_generate:
                {
                  AssertThrow(f.size() >= 2,
                              ExcMeshFile(name,
                                          line_number,
                                          "generate needs first, last[, "
                                          "increment]"));
                  const long first = number(f[0]), last = number(f[1]),
                             step = f.size() > 2 ? number(f[2]) : 1;
                  AssertThrow(step > 0 && last >= first,
                              ExcMeshFile(name,
                                          line_number,
                                          "bad generate range"));
                  for (long e = first; e <= last; e += step)
                    sets[current_set].push_back(e);
                  break;
                }
              case Block::none:
                break;
            }
        }
      structure.finish();
      AssertThrow(!element_order.empty() && !vertices.empty(),
                  ExcMeshFile(name, 0, "no *Node or *Element data found"));

      std::map<long, types::material_id>        material;
      std::map<std::string, types::material_id> result;
      for (unsigned int s = 0; s < set_names.size(); ++s)
        {
          AssertThrow(s + 1 < numbers::invalid_material_id,
                      ExcMeshFile(name, 0, "too many element sets"));
          result[set_names[s]] = s + 1;
          for (const long e : sets[set_names[s]])
            {
              // A set names the elements the file holds: one it does not
              // is a file cut short or damaged.
              AssertThrow(elements.find(e) != elements.end(),
                          ExcMeshFile(name,
                                      0,
                                      "the element set '" + set_names[s] +
                                        "' holds element " + std::to_string(e) +
                                        ", which is not defined: the file is "
                                        "truncated or damaged"));
              material.emplace(e, s + 1); // the first set wins
            }
        }

      std::vector<CellData<dim>> cells;
      for (const long id : element_order)
        {
          const std::vector<long>  &nodes = elements[id];
          CellData<dim>             cell(nodes.size());
          std::vector<unsigned int> v;
          for (const long n : nodes)
            {
              const auto it = vertex_index.find(n);
              AssertThrow(it != vertex_index.end(),
                          ExcMeshFile(name,
                                      0,
                                      "element " + std::to_string(id) +
                                        " refers to node " + std::to_string(n) +
                                        ", which is not defined"));
              v.push_back(it->second);
            }
          if constexpr (dim == 2)
            {
              // Counter-clockwise, then deal.II's lexicographic order for
              // quadrilaterals.
              double area = 0;
              for (unsigned int a = 0; a < v.size(); ++a)
                {
                  const Point<2> &p = vertices[v[a]],
                                 &q = vertices[v[(a + 1) % v.size()]];
                  area += p[0] * q[1] - q[0] * p[1];
                }
              if (area < 0)
                std::reverse(v.begin() + 1, v.end());
              if (v.size() == 4)
                std::swap(v[2], v[3]);
            }
          else
            {
              // Positively oriented (det[b-a, c-a, d-a] > 0), as deal.II
              // needs; a flat one is refused.
              Tensor<2, 3> edges;
              for (unsigned int j = 0; j < 3; ++j)
                for (unsigned int k = 0; k < 3; ++k)
                  edges[k][j] = vertices[v[j + 1]][k] - vertices[v[0]][k];
              const double det = determinant(edges);
              AssertThrow(det != 0 && std::isfinite(det),
                          ExcMeshFile(name,
                                      0,
                                      "element " + std::to_string(id) +
                                        " is flat (its four nodes lie in a "
                                        "plane)"));
              if (det < 0)
                std::swap(v[1], v[2]);
            }
          for (unsigned int a = 0; a < v.size(); ++a)
            cell.vertices[a] = v[a];
          const auto m     = material.find(id);
          cell.material_id = m == material.end() ? 0 : m->second;
          cells.push_back(cell);
        }
      // Nodes no element uses would become vertices deal.II refuses.
      std::vector<Point<dim>>    used_vertices;
      std::vector<CellData<dim>> used_cells = cells;
      std::vector<long>          node_label(vertices.size());
      for (const auto &[label, index] : vertex_index)
        node_label[index] = label;
      MeshFileSummary found;
      {
        std::vector<int> new_index(vertices.size(), -1);
        for (auto &cell : used_cells)
          for (auto &v : cell.vertices)
            {
              if (new_index[v] < 0)
                {
                  new_index[v] = used_vertices.size();
                  used_vertices.push_back(vertices[v]);
                  found.file_node_of_vertex.push_back(node_label[v]);
                }
              v = new_index[v];
            }
      }
      found.n_file_nodes   = vertex_index.size();
      found.n_unused_nodes = vertex_index.size() - used_vertices.size();
      tria.clear();
      tria.create_triangulation(used_vertices, used_cells, SubCellData());
      if (summary != nullptr)
        *summary = found;
      return result;
    }
  } // namespace



  std::map<std::string, types::material_id>
  read_abaqus(std::istream      &input,
              Triangulation<2>  &tria,
              const std::string &name,
              MeshFileSummary   *summary)
  {
    return read_abaqus_cells(input, tria, name, summary);
  }



  std::map<std::string, types::material_id>
  read_abaqus(std::istream      &input,
              Triangulation<3>  &tria,
              const std::string &name,
              MeshFileSummary   *summary)
  {
    return read_abaqus_cells(input, tria, name, summary);
  }



  template <int dim>
  std::map<std::string, types::material_id>
  read_abaqus(const std::string  &filename,
              Triangulation<dim> &tria,
              MeshFileSummary    *summary)
  {
    std::ifstream input(filename);
    AssertThrow(input, ExcMeshFile(filename, 0, "the file cannot be opened"));
    return read_abaqus(input, tria, filename, summary);
  }

  template std::map<std::string, types::material_id>
  read_abaqus(const std::string &, Triangulation<2> &, MeshFileSummary *);
  template std::map<std::string, types::material_id>
  read_abaqus(const std::string &, Triangulation<3> &, MeshFileSummary *);



  void
  internal::check_abaqus_structure(std::istream &input, const std::string &name)
  {
    BlockStructure structure(name);
    std::string    line;
    unsigned int   line_number = 0;
    while (std::getline(input, line))
      {
        ++line_number;
        line = trim(line);
        if (!line.empty() && line[0] == '*' && line.rfind("**", 0) != 0)
          structure.keyword(keyword_of(line), line_number);
      }
    input.clear();
    input.seekg(0);
    structure.finish();
  }
} // namespace GPUAssembly
