// SPDX-License-Identifier: LGPL-2.1-or-later
// A bounded, deterministic fuzz test of every mesh reader (.dat, .inp, .msh,
// .vtk; GPUAssembly::read_mesh in 2D and 3D, read_dat, read_abaqus), of
// the three apps' parameter files and of wave2d's checkpoint reader. Each seed
// (the test meshes, the apps' default parameter files) is mutated many times:
// truncated, tokens deleted, swapped or replaced by huge, negative or
// non-finite numbers, lines deleted or repeated, binary noise inserted. Every
// mutated input must end in an exception of deal.II's kind (a message for the
// user), or in a valid mesh or parameter set, never in a crash (the sanitizers
// of the build turn memory errors and undefined behaviour into one), a hang (an
// alarm), another exception type (std::bad_alloc, std::out_of_range: no message
// for the user), or a silent partial read (a truncated mesh file that reads
// with fewer cells or vertices than the whole one). Each seed is also cut
// after every one of its lines: such a file must be refused or read whole
// (but for Abaqus files without blocks, which declare nothing to tell).
//
//   input_fuzz SOURCE_DIR WORK_DIR [MUTATIONS_PER_SEED]

#include <deal.II/base/exceptions.h>
#include <deal.II/base/parameter_handler.h>

#include <deal.II/grid/tria.h>

#include <gpu_assembly/grid/mesh_input.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../../apps/assembly_demo/parameters.h"
#include "../../apps/hyperelastic/parameters.h"
#include "../../apps/wave2d/checkpoint.h"
#include "../../apps/wave2d/parameters.h"
#include <fcntl.h>
#include <unistd.h>

namespace
{
  using namespace dealii;

  std::string current_input;

  std::string current_content;

  void
  on_alarm(int)
  {
    // Keep the input that hangs (open and write are async-signal-safe).
    const int file = open("hang.input", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (file >= 0)
      {
        [[maybe_unused]] auto written =
          write(file, current_content.data(), current_content.size());
        close(file);
      }
    const char text[] = "FAIL: hang: an input took more than the time limit: ";
    [[maybe_unused]] auto ignored = write(2, text, sizeof(text) - 1);
    ignored = write(2, current_input.data(), current_input.size());
    ignored = write(2, "\n", 1);
    _exit(3);
  }

  std::string
  read_file(const std::string &name)
  {
    std::ifstream      in(name, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in)
      {
        std::cerr << "FAIL: cannot read the seed " << name << std::endl;
        std::exit(2);
      }
    return text.str();
  }

  void
  write_file(const std::string &name, const std::string &content)
  {
    std::ofstream out(name, std::ios::binary);
    out << content;
  }

  std::vector<std::pair<std::size_t, std::size_t>>
  tokens(const std::string &text)
  {
    std::vector<std::pair<std::size_t, std::size_t>> result;
    std::size_t                                      i = 0;
    while (i < text.size())
      {
        while (i < text.size() &&
               std::isspace(static_cast<unsigned char>(text[i])) != 0)
          ++i;
        const std::size_t begin = i;
        while (i < text.size() &&
               std::isspace(static_cast<unsigned char>(text[i])) == 0 &&
               text[i] != ',')
          ++i;
        if (i > begin)
          result.emplace_back(begin, i - begin);
        if (i < text.size() && text[i] == ',')
          ++i;
      }
    return result;
  }

  enum class Mutation
  {
    truncate,
    delete_token,
    swap_tokens,
    replace_number,
    insert_noise,
    repeat_line,
    delete_line,
    replace_byte
  };

  const std::vector<std::string> extreme_numbers = {"1e308",
                                                    "-1e308",
                                                    "1e400",
                                                    "1e-320",
                                                    "nan",
                                                    "inf",
                                                    "-inf",
                                                    "-1",
                                                    "0",
                                                    "4294967295",
                                                    "4294967296",
                                                    "-2147483649",
                                                    "9223372036854775807",
                                                    "99999999999999999999",
                                                    "1.5",
                                                    "0x10",
                                                    ""};

  std::string
  mutate(const std::string &seed, std::mt19937_64 &random, Mutation &kind)
  {
    std::string text = seed;
    const auto  pick = [&](const std::size_t n) {
      return n == 0 ?
                0 :
                std::uniform_int_distribution<std::size_t>(0, n - 1)(random);
    };
    const unsigned int n_mutations = 1 + pick(3);
    for (unsigned int m = 0; m < n_mutations; ++m)
      {
        kind = static_cast<Mutation>(pick(8));
        if (m > 0 && kind == Mutation::truncate)
          kind = Mutation::replace_number;
        const auto t = tokens(text);
        switch (kind)
          {
            case Mutation::truncate:
              text.resize(pick(text.size()));
              break;
            case Mutation::delete_token:
              if (!t.empty())
                {
                  const auto [begin, length] = t[pick(t.size())];
                  text.erase(begin, length);
                }
              break;
            case Mutation::swap_tokens:
              if (t.size() > 1)
                {
                  auto a = t[pick(t.size())], b = t[pick(t.size())];
                  if (a.first > b.first)
                    std::swap(a, b);
                  if (a.first + a.second <= b.first)
                    {
                      const std::string first  = text.substr(a.first, a.second);
                      const std::string second = text.substr(b.first, b.second);
                      text.replace(b.first, b.second, first);
                      text.replace(a.first, a.second, second);
                    }
                }
              break;
            case Mutation::replace_number:
              {
                std::vector<std::pair<std::size_t, std::size_t>> numbers;
                for (const auto &token : t)
                  if (std::isdigit(
                        static_cast<unsigned char>(text[token.first])) != 0 ||
                      text[token.first] == '-')
                    numbers.push_back(token);
                if (!numbers.empty())
                  {
                    const auto [begin, length] = numbers[pick(numbers.size())];
                    text.replace(begin,
                                 length,
                                 extreme_numbers[pick(extreme_numbers.size())]);
                  }
                break;
              }
            case Mutation::insert_noise:
              {
                std::string noise(1 + pick(16), ' ');
                for (char &c : noise)
                  c = static_cast<char>(pick(256));
                text.insert(pick(text.size() + 1), noise);
                break;
              }
            case Mutation::repeat_line:
            case Mutation::delete_line:
              {
                std::vector<std::size_t> starts = {0};
                for (std::size_t i = 0; i < text.size(); ++i)
                  if (text[i] == '\n' && i + 1 < text.size())
                    starts.push_back(i + 1);
                const std::size_t line = pick(starts.size());
                const std::size_t end =
                  line + 1 < starts.size() ? starts[line + 1] : text.size();
                const std::string content =
                  text.substr(starts[line], end - starts[line]);
                if (kind == Mutation::repeat_line)
                  text.insert(end, content);
                else
                  text.erase(starts[line], end - starts[line]);
                break;
              }
            case Mutation::replace_byte:
              if (!text.empty())
                text[pick(text.size())] = static_cast<char>(pick(256));
              break;
          }
      }
    return text;
  }

  struct Counts
  {
    unsigned int inputs = 0, valid = 0, refused = 0, failures = 0;
  };

  // Runs @p attempt on the input and counts what it gives: valid, refused
  // with deal.II's exception (a message for the user), or a failure: an
  // exception of another type (reported here), or false from @p attempt
  // (which reports and counts it). Returns whether it was no failure.
  bool
  run_counted(const std::function<bool()> &attempt, Counts &counts)
  {
    try
      {
        if (!attempt())
          return false;
        ++counts.valid;
      }
    catch (const ExceptionBase &)
      {
        ++counts.refused;
      }
    catch (const std::exception &exc)
      {
        std::cerr << "FAIL: " << current_input
                  << ": an exception without a message for the user: "
                  << exc.what() << std::endl;
        ++counts.failures;
        return false;
      }
    return true;
  }

  // Runs @p read on the input; returns the cells and vertices read (0, 0
  // if refused). Failures (other exception types) are reported.
  template <int dim>
  bool
  check_mesh(const std::function<void(Triangulation<dim> &)> &read,
             unsigned int                                    &n_cells,
             unsigned int                                    &n_vertices,
             Counts                                          &counts)
  {
    n_cells = n_vertices = 0;
    return run_counted(
      [&]() {
        Triangulation<dim> tria;
        read(tria);
        n_cells     = tria.n_active_cells();
        n_vertices  = tria.n_used_vertices();
        bool finite = n_cells > 0;
        for (const auto &v : tria.get_vertices())
          for (unsigned int d = 0; d < dim; ++d)
            finite = finite && std::isfinite(v[d]);
        if (!finite)
          {
            std::cerr << "FAIL: " << current_input
                      << ": read without error, but the mesh has no cells "
                         "or a vertex that is not finite"
                      << std::endl;
            ++counts.failures;
          }
        return finite;
      },
      counts);
  }

  struct MeshSeed
  {
    std::string file;
    std::string extension;
    // 2: read_mesh<2>; 3: read_mesh<3>; 0: read_abaqus (2D); 4:
    // read_abaqus (3D); -3: read_dat on a stream.
    std::vector<int> readers;
  };

  template <typename Parameters>
  void
  parse_parameters(const std::string &text)
  {
    ParameterHandler prm;
    Parameters::declare_parameters(prm);
    prm.parse_input_from_string(text);
    Parameters parameters;
    parameters.parse_parameters(prm);
  }
} // namespace



int
main(int argc, char **argv)
{
  if (argc < 3)
    {
      std::cerr << "Usage: " << argv[0]
                << " SOURCE_DIR WORK_DIR [MUTATIONS_PER_SEED]" << std::endl;
      return 2;
    }
  const std::string  source = argv[1], work = argv[2];
  const unsigned int n_per_seed = argc > 3 ? std::atoi(argv[3]) : 250;
  std::signal(SIGALRM, on_alarm);
  deal_II_exceptions::disable_abort_on_exception();
  deal_II_exceptions::suppress_stacktrace_in_exceptions();

  const std::vector<MeshSeed> mesh_seeds = {
    {source + "/tests/data/Sphere_63.dat", "dat", {3, -3}},
    {source + "/tests/data/Sphere_63_unused_nodes.dat", "dat", {3}},
    {source + "/tests/data/two_quads.inp", "inp", {0, 2}},
    {source + "/tests/data/wave2d_weld.inp", "inp", {0}},
    {source + "/tests/data/wave2d_two_layers.msh", "msh", {2, 3}},
    {source + "/tests/fuzz/seeds/cube_tetrahedra.msh", "msh", {3, 2}},
    {source + "/tests/data/mixed_hex_tet.vtk", "vtk", {3}},
    {source + "/tests/data/Sphere_63_v42.vtk", "vtk", {3}},
    {source + "/tests/data/Sphere_63_v51.vtk", "vtk", {3}},
    {source + "/tests/data/Sphere_63_c3d4.inp", "inp", {3, 4}},
    {source + "/tests/fuzz/seeds/square_quadrilaterals.vtk", "vtk", {2, 3}}};

  std::mt19937_64 random(20240611);
  Counts          counts;
  for (const MeshSeed &seed : mesh_seeds)
    {
      const std::string original = read_file(seed.file);
      const std::string name     = work + "/input." + seed.extension;
      for (const int reader : seed.readers)
        {
          const auto read = [&](const std::string &file,
                                unsigned int      &n_cells,
                                unsigned int      &n_vertices) {
            if (reader == 2 || reader == 0)
              return check_mesh<2>(
                [&](Triangulation<2> &t) {
                  if (reader == 0)
                    GPUAssembly::read_abaqus(file, t);
                  else
                    GPUAssembly::read_mesh(file, t);
                },
                n_cells,
                n_vertices,
                counts);
            return check_mesh<3>(
              [&](Triangulation<3> &t) {
                if (reader == 3)
                  GPUAssembly::read_mesh(file, t);
                else if (reader == 4)
                  GPUAssembly::read_abaqus(file, t);
                else
                  {
                    std::ifstream in(file, std::ios::binary);
                    GPUAssembly::read_dat(in, t, file);
                  }
              },
              n_cells,
              n_vertices,
              counts);
          };

          // The seed itself, as the reference for partial reads.
          write_file(name, original);
          current_input =
            seed.file + " (reader " + std::to_string(reader) + ", unmutated)";
          unsigned int whole_cells = 0, whole_vertices = 0;
          alarm(10);
          read(name, whole_cells, whole_vertices);
          alarm(0);

          // Abaqus files declare no counts: cut between two lines, one
          // without blocks (*Part ... *End Part) is a smaller valid file.
          // Every other file cut after any of its lines is refused or read
          // whole.
          const bool counts_nothing =
            seed.extension == "inp" &&
            original.find("*End") == std::string::npos;
          for (std::size_t end = original.find('\n');
               !counts_nothing && end != std::string::npos &&
               end + 1 < original.size();
               end = original.find('\n', end + 1))
            {
              const std::string input = original.substr(0, end + 1);
              write_file(name, input);
              current_content = input;
              current_input = seed.file + " (reader " + std::to_string(reader) +
                              ", cut after byte " + std::to_string(end + 1) +
                              ", kept as " + name + ".failed)";
              ++counts.inputs;
              unsigned int n_cells = 0, n_vertices = 0;
              alarm(10);
              bool ok = read(name, n_cells, n_vertices);
              alarm(0);
              if (ok && n_cells > 0 &&
                  (n_cells != whole_cells || n_vertices != whole_vertices))
                {
                  std::cerr << "FAIL: " << current_input
                            << ": cut after a whole line, it read as "
                            << n_cells << " cells and " << n_vertices
                            << " vertices instead of " << whole_cells << " and "
                            << whole_vertices << " without an error"
                            << std::endl;
                  ++counts.failures;
                  ok = false;
                }
              if (!ok)
                write_file(name + ".failed.cut." + std::to_string(end + 1),
                           input);
            }

          for (unsigned int i = 0; i < n_per_seed; ++i)
            {
              Mutation          kind;
              const std::string input = mutate(original, random, kind);
              write_file(name, input);
              current_content = input;
              current_input = seed.file + " (reader " + std::to_string(reader) +
                              ", mutation " + std::to_string(i) + ", kept as " +
                              name + ".failed)";
              ++counts.inputs;
              unsigned int n_cells, n_vertices;
              alarm(10);
              bool ok = read(name, n_cells, n_vertices);
              alarm(0);
              // A truncated file must not read as a smaller mesh.
              // Abaqus files declare no counts: a cut at a line break gives
              // a smaller valid file, a cut within a line must not read.
              const bool cut_within_line =
                !input.empty() && input.back() != '\n' && input.back() != '\r';
              if (ok && kind == Mutation::truncate && n_cells > 0 &&
                  (!counts_nothing || cut_within_line) &&
                  (n_cells < whole_cells || n_vertices < whole_vertices))
                {
                  std::cerr
                    << "FAIL: " << current_input << ": truncated, it read as "
                    << n_cells << " cells and " << n_vertices
                    << " vertices instead of " << whole_cells << " and "
                    << whole_vertices << " without an error" << std::endl;
                  ++counts.failures;
                  ok = false;
                }
              if (!ok)
                write_file(name + ".failed." + std::to_string(i), input);
            }
        }
    }

  // Parameter files: each app's defaults as written by print_parameters,
  // and with every entry present.
  const auto defaults = [](const auto declare) {
    ParameterHandler prm;
    declare(prm);
    std::ostringstream out;
    prm.print_parameters(out, ParameterHandler::PRM);
    return out.str();
  };
  const std::vector<std::pair<std::string, std::function<void(std::string)>>>
    parameter_seeds       = {{defaults(Wave2D::Parameters::declare_parameters),
                              parse_parameters<Wave2D::Parameters>},
                             {defaults(Hyperelastic::Parameters::declare_parameters),
                              parse_parameters<Hyperelastic::Parameters>},
                             {defaults(AssemblyDemo::Parameters::declare_parameters),
                              parse_parameters<AssemblyDemo::Parameters>}};
  const char *app_names[] = {"wave2d", "hyperelastic", "assembly_demo"};
  for (unsigned int s = 0; s < parameter_seeds.size(); ++s)
    {
      const auto &[original, parse] = parameter_seeds[s];
      for (unsigned int i = 0; i < n_per_seed; ++i)
        {
          Mutation          kind;
          const std::string input = mutate(original, random, kind);
          current_content         = input;
          current_input           = std::string(app_names[s]) +
                          " parameter file, mutation " + std::to_string(i);
          ++counts.inputs;
          alarm(10);
          const bool ok = run_counted(
            [&]() {
              parse(input);
              return true;
            },
            counts);
          alarm(0);
          if (!ok)
            write_file(work + "/" + app_names[s] + ".prm.failed." +
                         std::to_string(i),
                       input);
        }
    }

  // wave2d's checkpoint reader: a small checkpoint with every byte changed
  // in turn, cut at every length, and mutated at random. Only the file
  // itself may be read; every other input must be refused with a message.
  {
    Wave2D::Checkpoint checkpoint;
    checkpoint.fingerprint = 42;
    checkpoint.precision   = 8;
    checkpoint.step        = 6;
    for (unsigned int i = 0; i < 10; ++i)
      {
        checkpoint.u_previous.push_back(0.1 * i);
        checkpoint.u_current.push_back(-0.2 * i);
      }
    checkpoint.history         = {1, 2, 3, 4, 5, 6};
    checkpoint.snapshots       = {{0., "snapshot-000000.vtu"},
                                  {1e-6, "snapshot-000005.vtu"}};
    const std::string original = Wave2D::serialize_checkpoint(checkpoint);
    const auto check = [&](const std::string &input, const std::string &what) {
      current_input   = "checkpoint.bin, " + what;
      current_content = input;
      ++counts.inputs;
      alarm(10);
      const bool ok = run_counted(
        [&]() {
          const Wave2D::Checkpoint read =
            Wave2D::parse_checkpoint(input, "checkpoint.bin");
          if (input == original && read.u_current == checkpoint.u_current &&
              read.history == checkpoint.history &&
              read.snapshots == checkpoint.snapshots)
            return true;
          std::cerr << "FAIL: " << current_input
                    << ": read without error, but it is not the checkpoint "
                       "written"
                    << std::endl;
          ++counts.failures;
          return false;
        },
        counts);
      alarm(0);
      if (!ok)
        write_file(work + "/checkpoint.bin.failed", input);
    };
    check(original, "unchanged");
    for (std::size_t i = 0; i < original.size(); ++i)
      {
        std::string input = original;
        input[i]          = char(input[i] + 1);
        check(input, "byte " + std::to_string(i) + " changed");
      }
    for (std::size_t length = 0; length < original.size(); ++length)
      check(original.substr(0, length),
            "cut to " + std::to_string(length) + " bytes");
    for (unsigned int i = 0; i < n_per_seed; ++i)
      {
        Mutation          kind;
        const std::string input = mutate(original, random, kind);
        if (input != original)
          check(input, "mutation " + std::to_string(i));
      }
  }

  std::cout << counts.inputs << " mutated inputs: " << counts.valid
            << " read as valid, " << counts.refused
            << " refused with a message, " << counts.failures << " failures."
            << std::endl;
  if (counts.failures > 0)
    {
      std::cout << "FAIL: every input must end in a message or a valid "
                   "result (failing inputs are kept in "
                << work << ")" << std::endl;
      return 1;
    }
  std::cout << "ok: no crash, hang, unclear exception or silent partial read"
            << std::endl;
  return 0;
}
