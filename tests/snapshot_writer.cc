// SPDX-License-Identifier: LGPL-2.1-or-later
// The apps' SnapshotWriter against deal.II's DataOut::write_vtu() on the
// output set-ups of the apps (wave2d: a 2d displacement and two cell fields,
// compressed for speed; hyperelastic: displacement, velocity and two cell
// fields in 3d, best compression; on quadrilaterals/hexahedra and
// simplices): on small meshes, whose arrays fit one compression block, the
// file bytes must be equal; on larger meshes, whose arrays are compressed
// in blocks on several threads, the text outside the arrays and every
// array's decoded bytes must be equal, at every compression level. The same
// for write_vtu() (one DataOut file). Then the 'Compression' entry, the
// files of write(), the order of the callbacks, and an error on the writer
// thread thrown by flush() with the file's name; ahead work (wave2d's images)
// done before its callback, while earlier callbacks wait, its error
// reported as the callback's. A series whose cell fields
// repeat (their encoded text is reused) writes DataOut's files all the
// same; write_vtu() of a DataOutFaces holds what its write_vtu() writes; the
// timings and the output share line add up; the queue holds as many
// snapshots as its memory allows, two at least.

#include "snapshot_writer.h"

#include <deal.II/base/data_out_base.h>
#include <deal.II/base/parameter_handler.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping_fe.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/tria.h>

#include <deal.II/lac/vector.h>

#include <deal.II/numerics/data_out.h>
#include <deal.II/numerics/data_out_faces.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "app_utilities.h"

using namespace dealii;

namespace
{
  int n_failures = 0;

  void
  check(const bool ok, const std::string &what)
  {
    std::cout << (ok ? "  ok: " : "  FAILED: ") << what << std::endl;
    if (!ok)
      ++n_failures;
  }

  // Random values with exact zeros of both signs among them, which DataOut
  // writes as +0.
  std::vector<double>
  random_values(const std::size_t n, std::mt19937 &random)
  {
    std::uniform_real_distribution<double> value(-1e3, 1e3);
    std::vector<double>                    v(n);
    for (std::size_t i = 0; i < n; ++i)
      v[i] = i % 7 == 0 ? (i % 14 == 0 ? -0.0 : 0.0) : value(random);
    return v;
  }

  // The position of the first byte where @p a and @p b differ.
  std::size_t
  first_difference(const std::string &a, const std::string &b)
  {
    std::size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i])
      ++i;
    return i;
  }

  // @p vtu without its data lines (those after a DataArray's opening).
  std::string
  without_data(const std::string &vtu)
  {
    std::istringstream in(vtu);
    std::string        text, line;
    bool               data = false;
    while (std::getline(in, line))
      {
        if (!data)
          text += line + '\n';
        data = line.find("<DataArray") != std::string::npos;
      }
    return text;
  }

  // Whether @p ours holds what @p reference does: the same text outside
  // the arrays and the same decoded bytes in each; says which part differs.
  bool
  same_content(const std::string &ours,
               const std::string &reference,
               std::string       &what)
  {
    if (without_data(ours) != without_data(reference))
      {
        what = "the text outside the data arrays differs";
        return false;
      }
    const auto a = AppUtilities::read_vtu_data_arrays(ours),
               b = AppUtilities::read_vtu_data_arrays(reference);
    if (a.size() != b.size())
      {
        what = std::to_string(a.size()) + " data arrays against " +
               std::to_string(b.size());
        return false;
      }
    std::size_t largest = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      {
        if (a[i].opening != b[i].opening || a[i].bytes != b[i].bytes)
          {
            what = "the decoded bytes of " + b[i].opening + " differ";
            return false;
          }
        largest = std::max(largest, b[i].bytes.size());
      }
    what = std::to_string(a.size()) +
           " data arrays decode to the same bytes (largest " +
           std::to_string(largest) + " bytes)";
    return true;
  }

  // The largest decoded data array of @p vtu, in bytes.
  std::size_t
  largest_array(const std::string &vtu)
  {
    std::size_t largest = 0;
    for (const auto &array : AppUtilities::read_vtu_data_arrays(vtu))
      largest = std::max(largest, array.bytes.size());
    return largest;
  }

  // Arrays above this many bytes are compressed in blocks.
  constexpr std::size_t one_block = 65536;

  template <int dim>
  void
  compare(
    const std::string                                           &name,
    const std::vector<std::size_t>                              &sizes,
    const typename AppUtilities::SnapshotWriter<dim>::Configure &configure,
    DataOutBase::VtkFlags                                        flags,
    const bool                                                   blocks)
  {
    std::cout << name << std::endl;
    // Without the date the whole file must be equal byte for byte.
    flags.print_date_and_time = false;
    AppUtilities::SnapshotWriter<dim> writer(sizes, configure, flags);
    std::mt19937                      random(sizes[0]);
    for (unsigned int snapshot = 0; snapshot < 3; ++snapshot)
      {
        std::vector<std::vector<double>> inputs;
        std::vector<Vector<double>>      vectors;
        for (const std::size_t size : sizes)
          {
            inputs.push_back(random_values(size, random));
            vectors.emplace_back(inputs.back().begin(), inputs.back().end());
          }
        DataOut<dim> data_out;
        configure(data_out, vectors);
        data_out.set_flags(flags);
        std::ostringstream reference;
        data_out.write_vtu(reference);
        const std::string ours    = writer.vtu(inputs);
        const std::size_t largest = largest_array(reference.str());
        if (snapshot == 0)
          check((largest > one_block) == blocks,
                "the largest array, " + std::to_string(largest) +
                  " bytes, is " + (blocks ? "above" : "within") +
                  " one block, as the case is meant to test");
        if (largest <= one_block)
          {
            const std::size_t at = first_difference(ours, reference.str());
            check(ours == reference.str(),
                  "snapshot " + std::to_string(snapshot) + ": " +
                    std::to_string(ours.size()) +
                    " bytes equal to DataOut::write_vtu's " +
                    std::to_string(reference.str().size()) +
                    (ours == reference.str() ? std::string() :
                                               " (first difference at byte " +
                                                 std::to_string(at) + ")"));
          }
        else
          {
            std::string what;
            const bool  same = same_content(ours, reference.str(), what);
            check(same,
                  "snapshot " + std::to_string(snapshot) +
                    ", arrays compressed in blocks: " + what +
                    " as in DataOut::write_vtu's file");
          }
      }
  }

  template <int dim>
  struct Mesh
  {
    Triangulation<dim>             triangulation;
    std::unique_ptr<FESystem<dim>> fe;
    std::unique_ptr<Mapping<dim>>  mapping;
    DoFHandler<dim>                dof_handler;

    Mesh(const bool simplex, const unsigned int subdivisions = 3)
    {
      if (simplex)
        {
          GridGenerator::subdivided_hyper_cube_with_simplices(triangulation,
                                                              subdivisions);
          fe      = std::make_unique<FESystem<dim>>(FE_SimplexP<dim>(1), dim);
          mapping = std::make_unique<MappingFE<dim>>(FE_SimplexP<dim>(1));
        }
      else
        {
          GridGenerator::subdivided_hyper_cube(triangulation, subdivisions);
          fe      = std::make_unique<FESystem<dim>>(FE_Q<dim>(1), dim);
          mapping = std::make_unique<MappingQ<dim>>(1);
        }
      dof_handler.reinit(triangulation);
      dof_handler.distribute_dofs(*fe);
    }
  };

  template <int dim>
  std::vector<DataComponentInterpretation::DataComponentInterpretation>
  vector_field()
  {
    return std::vector<
      DataComponentInterpretation::DataComponentInterpretation>(
      dim,
      DataComponentInterpretation::component_is_part_of_vector);
  }

  std::string
  level_name(const DataOutBase::VtkFlags::ZlibCompressionLevel level)
  {
    switch (level)
      {
        case DataOutBase::VtkFlags::no_compression:
          return "no compression";
        case DataOutBase::VtkFlags::best_speed:
          return "best speed";
        case DataOutBase::VtkFlags::best_compression:
          return "best compression";
        default:
          return "default compression";
      }
  }

  // How wave2d hands a snapshot to DataOut on @p mesh: displacement,
  // material id and damping per cell.
  AppUtilities::SnapshotWriter<2>::Configure
  wave2d_output(const Mesh<2> &mesh)
  {
    return
      [&mesh](DataOut<2> &data_out, const std::vector<Vector<double>> &in) {
        data_out.attach_dof_handler(mesh.dof_handler);
        data_out.add_data_vector(in[0],
                                 std::vector<std::string>(2, "displacement"),
                                 DataOut<2>::type_dof_data,
                                 vector_field<2>());
        data_out.add_data_vector(in[1], "material_id");
        data_out.add_data_vector(in[2], "absorbing_damping");
        data_out.build_patches(*mesh.mapping);
      };
  }

  // wave2d's snapshot: displacement, material id and damping per cell.
  void
  wave2d(const bool                                        simplex,
         const unsigned int                                subdivisions,
         const DataOutBase::VtkFlags::ZlibCompressionLevel level)
  {
    const Mesh<2>         mesh(simplex, subdivisions);
    const auto            configure = wave2d_output(mesh);
    DataOutBase::VtkFlags flags;
    flags.compression_level   = level;
    const std::size_t n_cells = mesh.triangulation.n_active_cells();
    compare<2>(std::string("wave2d, ") + std::to_string(n_cells) + " " +
                 (simplex ? "triangles" : "quadrilaterals") + ", " +
                 level_name(level),
               {mesh.dof_handler.n_dofs(), n_cells, n_cells},
               configure,
               flags,
               subdivisions > 3);
  }

  // hyperelastic's output: displacement, velocity, J and von Mises stress.
  void
  hyperelastic(const bool                                        simplex,
               const unsigned int                                subdivisions,
               const DataOutBase::VtkFlags::ZlibCompressionLevel level)
  {
    const Mesh<3> mesh(simplex, subdivisions);
    const auto    configure = [&](DataOut<3>                        &data_out,
                               const std::vector<Vector<double>> &in) {
      data_out.attach_dof_handler(mesh.dof_handler);
      data_out.add_data_vector(in[0],
                               std::vector<std::string>(3, "displacement"),
                               DataOut<3>::type_dof_data,
                               vector_field<3>());
      data_out.add_data_vector(in[1],
                               std::vector<std::string>(3, "velocity"),
                               DataOut<3>::type_dof_data,
                               vector_field<3>());
      data_out.add_data_vector(in[2], "J", DataOut<3>::type_cell_data);
      data_out.add_data_vector(in[3],
                               "von_Mises_stress",
                               DataOut<3>::type_cell_data);
      data_out.build_patches(*mesh.mapping);
    };
    const std::size_t n_dofs  = mesh.dof_handler.n_dofs(),
                      n_cells = mesh.triangulation.n_active_cells();
    DataOutBase::VtkFlags flags;
    flags.compression_level = level;
    compare<3>(std::string("hyperelastic, ") + std::to_string(n_cells) + " " +
                 (simplex ? "tetrahedra" : "hexahedra") + ", " +
                 level_name(level),
               {n_dofs, n_dofs, n_cells, n_cells},
               configure,
               flags,
               subdivisions > 3);
  }

  // write_vtu(): the file of a DataOut (degree 2, two subdivisions per
  // cell, as assembly_demo writes it) holds what DataOut::write_vtu()
  // writes, byte for byte where the arrays fit one block.
  void
  single_file(const unsigned int                                subdivisions,
              const DataOutBase::VtkFlags::ZlibCompressionLevel level)
  {
    std::cout << "write_vtu(), " << std::to_string(subdivisions)
              << "^3 hexahedra of degree 2, " << level_name(level) << std::endl;
    Triangulation<3> triangulation;
    GridGenerator::subdivided_hyper_cube(triangulation, subdivisions);
    const FESystem<3> fe(FE_Q<3>(2), 3);
    DoFHandler<3>     dof_handler(triangulation);
    dof_handler.distribute_dofs(fe);
    std::mt19937         random(subdivisions);
    const auto           values = random_values(dof_handler.n_dofs(), random);
    const Vector<double> u(values.begin(), values.end());
    DataOut<3>           data_out;
    data_out.attach_dof_handler(dof_handler);
    data_out.add_data_vector(u,
                             std::vector<std::string>(3, "displacement"),
                             DataOut<3>::type_dof_data,
                             vector_field<3>());
    data_out.build_patches(MappingQ<3>(2), 2);
    DataOutBase::VtkFlags flags;
    flags.compression_level   = level;
    flags.print_date_and_time = false;
    data_out.set_flags(flags);
    std::ostringstream reference;
    data_out.write_vtu(reference);
    const std::string path = "snapshot_writer_single.vtu";
    AppUtilities::write_vtu(data_out, flags, path);
    std::ifstream     file(path, std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    if (largest_array(reference.str()) <= one_block)
      check(text.str() == reference.str(),
            std::to_string(text.str().size()) +
              " bytes equal to DataOut::write_vtu's " +
              std::to_string(reference.str().size()));
    else
      {
        std::string what;
        const bool  same = same_content(text.str(), reference.str(), what);
        check(same,
              "arrays compressed in blocks: " + what +
                " as in DataOut::write_vtu's file");
      }
  }

  // The 'Compression' entry: each name gives its level, anything else is
  // refused by the parameter file's reader.
  void
  compression_entry()
  {
    std::cout << "the 'Compression' entry" << std::endl;
    const std::vector<
      std::pair<std::string, DataOutBase::VtkFlags::ZlibCompressionLevel>>
      names{{"best speed", DataOutBase::VtkFlags::best_speed},
            {"default", DataOutBase::VtkFlags::default_compression},
            {"best compression", DataOutBase::VtkFlags::best_compression},
            {"none", DataOutBase::VtkFlags::no_compression}};
    for (const auto &[name, level] : names)
      {
        ParameterHandler prm;
        AppUtilities::declare_compression_entry(prm, "best speed");
        prm.parse_input_from_string("set Compression = " + name);
        check(AppUtilities::parse_compression_entry(prm) == level,
              "'" + name + "' is " + level_name(level));
      }
    ParameterHandler prm;
    AppUtilities::declare_compression_entry(prm, "best speed");
    check(AppUtilities::parse_compression_entry(prm) ==
            DataOutBase::VtkFlags::best_speed,
          "the default given is the entry's default");
    bool refused = false;
    try
      {
        prm.parse_input_from_string("set Compression = fast");
      }
    catch (const std::exception &)
      {
        refused = true;
      }
    check(refused, "'Compression' = 'fast' is refused");
  }

  // The configuration of a series of one scalar field "u" on @p mesh.
  AppUtilities::SnapshotWriter<2>::Configure
  scalar_field(const Mesh<2> &mesh)
  {
    return
      [&mesh](DataOut<2> &data_out, const std::vector<Vector<double>> &in) {
        data_out.attach_dof_handler(mesh.dof_handler);
        data_out.add_data_vector(in[0], "u");
        data_out.build_patches(*mesh.mapping);
      };
  }

  // The directory @p name, emptied.
  std::string
  empty_directory(const std::string &name)
  {
    std::filesystem::remove_all(name);
    std::filesystem::create_directories(name);
    return name;
  }

  // The files of write() hold what vtu() returns (up to the date line),
  // each callback runs after its file is complete, and an error on the
  // writer thread reaches flush() with the file's name.
  void
  files_and_errors()
  {
    std::cout << "write(), callbacks and errors" << std::endl;
    const Mesh<2>         mesh(false);
    const auto            configure = scalar_field(mesh);
    const std::string     directory = empty_directory("snapshot_writer_output");
    std::mt19937          random(1);
    DataOutBase::VtkFlags flags;
    std::vector<std::string> expected;
    std::vector<std::string> completed;
    std::vector<std::string> paths;
    {
      AppUtilities::SnapshotWriter<2> writer({mesh.dof_handler.n_dofs()},
                                             configure,
                                             flags);
      for (unsigned int i = 0; i < 5; ++i)
        {
          std::vector<std::vector<double>> inputs{
            random_values(mesh.dof_handler.n_dofs(), random)};
          expected.push_back(writer.vtu(inputs));
          const std::string path =
            directory + "/s" + std::to_string(i) + ".vtu";
          paths.push_back(path);
          writer.write(path, std::move(inputs), [&completed, path]() {
            completed.push_back(
              std::filesystem::exists(path) &&
                  !std::filesystem::exists(path + ".partial") ?
                path :
                "incomplete " + path);
          });
        }
      writer.flush();
    }
    check(completed == paths,
          "the 5 callbacks ran in order, each after its file was complete");
    bool equal = true;
    for (unsigned int i = 0; i < paths.size(); ++i)
      {
        std::ifstream     file(paths[i], std::ios::binary);
        std::stringstream text;
        text << file.rdbuf();
        // The date line holds the time of writing.
        const auto strip = [](const std::string &s) {
          const std::size_t a = s.find("#This file"), b = s.find('\n', a);
          return s.substr(0, a) + s.substr(b);
        };
        equal = equal && strip(text.str()) == strip(expected[i]);
      }
    check(equal, "the files hold the text of vtu(), date line aside");

    AppUtilities::SnapshotWriter<2> writer({mesh.dof_handler.n_dofs()},
                                           configure,
                                           flags);
    const std::string               missing = directory + "/missing/s.vtu";
    writer.write(missing, {std::vector<double>(mesh.dof_handler.n_dofs(), 1.)});
    std::string message;
    try
      {
        writer.flush();
      }
    catch (const std::exception &e)
      {
        message = e.what();
      }
    check(message.find(missing) != std::string::npos,
          "a file in a missing directory is reported by flush(), naming "
          "it");
    check(!std::filesystem::exists(missing + ".partial"),
          "no partial file is left behind");
    bool refused = false;
    try
      {
        writer.write(directory + "/s.vtu", {std::vector<double>(3, 1.)});
      }
    catch (const std::exception &)
      {
        refused = true;
      }
    check(refused, "a snapshot of the wrong size is refused");

    // A callback that fails stops the series: its message reaches flush(),
    // and the callbacks of later snapshots do not run.
    AppUtilities::SnapshotWriter<2> failing({mesh.dof_handler.n_dofs()},
                                            configure,
                                            flags);
    bool                            later_ran = false;
    failing.write(directory + "/f0.vtu",
                  {std::vector<double>(mesh.dof_handler.n_dofs(), 1.)},
                  []() {
                    throw std::runtime_error("the record of f0 failed");
                  });
    message.clear();
    try
      {
        failing.write(directory + "/f1.vtu",
                      {std::vector<double>(mesh.dof_handler.n_dofs(), 1.)},
                      [&later_ran]() {
                        later_ran = true;
                      });
        failing.flush();
      }
    catch (const std::exception &e)
      {
        message = e.what();
      }
    check(message.find("the record of f0 failed") != std::string::npos,
          "a failing callback's error is thrown by write() or flush()");
    check(!later_ran, "no callback runs after a failed one");
  }

  // Each snapshot's ahead work ends before its callback runs, the callbacks
  // keep the order of the snapshots whichever work ends first, the work of
  // later snapshots runs while an earlier callback waits, flush() waits for
  // work without a callback, and an error of ahead work is thrown as the
  // callback's: that callback and later ones do not run, earlier ones do.
  void
  ahead_work()
  {
    std::cout << "ahead work" << std::endl;
    const Mesh<2>     mesh(false);
    const auto        configure = scalar_field(mesh);
    const std::string directory = empty_directory("snapshot_writer_ahead");
    const DataOutBase::VtkFlags flags;
    const unsigned int          n = 6;
    const std::vector<double>   zeros(mesh.dof_handler.n_dofs(), 0.);

    std::mutex                mutex;
    std::condition_variable   changed;
    std::vector<int>          drawn(n, -1);
    std::vector<unsigned int> order;
    bool                      all_saw_their_work           = true;
    bool                      last_drawn_while_first_waits = false;
    {
      AppUtilities::SnapshotWriter<2> writer({mesh.dof_handler.n_dofs()},
                                             configure,
                                             flags);
      for (unsigned int i = 0; i < n; ++i)
        writer.write(
          directory + "/s" + std::to_string(i) + ".vtu",
          {zeros},
          [&, i]() {
            std::unique_lock<std::mutex> lock(mutex);
            if (i == 0)
              // A guard against a writer that never runs the work: the
              // check below fails then instead of the test hanging.
              last_drawn_while_first_waits =
                changed.wait_for(lock, std::chrono::seconds(120), [&]() {
                  return drawn[n - 1] >= 0;
                });
            all_saw_their_work = all_saw_their_work && drawn[i] == int(i);
            order.push_back(i);
          },
          {},
          [&, i]() {
            // Earlier snapshots' work takes longer, so that later work may
            // end first.
            std::this_thread::sleep_for(std::chrono::milliseconds(5 * (n - i)));
            std::unique_lock<std::mutex> lock(mutex);
            drawn[i] = i;
            changed.notify_all();
          });
      writer.flush();
      check(writer.timings().ahead > 0,
            "the timings count the time of the ahead work");
    }
    std::vector<unsigned int> expected(n);
    for (unsigned int i = 0; i < n; ++i)
      expected[i] = i;
    check(order == expected, "the callbacks ran in the order of the snapshots");
    check(all_saw_their_work,
          "each callback ran after its snapshot's ahead work");
    check(last_drawn_while_first_waits,
          "the last snapshot's ahead work ran while the first callback "
          "waited");

    bool alone_done = false;
    {
      AppUtilities::SnapshotWriter<2> writer({mesh.dof_handler.n_dofs()},
                                             configure,
                                             flags);
      writer.write(directory + "/alone.vtu", {zeros}, {}, {}, [&]() {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        alone_done = true;
      });
      writer.flush();
      check(alone_done,
            "flush() returns after ahead work without a callback is done");
    }

    std::vector<bool> ran(3, false);
    std::string       message;
    {
      AppUtilities::SnapshotWriter<2> writer({mesh.dof_handler.n_dofs()},
                                             configure,
                                             flags);
      try
        {
          for (unsigned int i = 0; i < 3; ++i)
            writer.write(
              directory + "/e" + std::to_string(i) + ".vtu",
              {zeros},
              [&ran, i]() {
                ran[i] = true;
              },
              {},
              [i]() {
                if (i == 1)
                  throw std::runtime_error("the image of e1 failed");
              });
          writer.flush();
        }
      catch (const std::exception &e)
        {
          message = e.what();
        }
    }
    check(message.find("the image of e1 failed") != std::string::npos,
          "an error of ahead work is thrown by write() or flush()");
    check(ran[0] && !ran[1] && !ran[2],
          "the callback before the failed work ran, its own and later ones "
          "did not");
  }

  // A series whose inputs repeat in part (wave2d's cell fields do in every
  // snapshot): each file of write() is DataOut's file of its inputs, byte
  // for byte (the arrays fit one block, no date), whether an array's text
  // is encoded again or kept from the snapshot before. Snapshot 2 repeats
  // snapshot 1 whole; snapshot 3 changes one cell value from +0 to -0 only
  // (DataOut keeps the sign of cell data). Then the writer's timings.
  void
  repeated_inputs()
  {
    std::cout << "write() with inputs that repeat" << std::endl;
    const Mesh<2>     mesh(true, 3);
    const auto        configure = wave2d_output(mesh);
    const std::size_t n_dofs    = mesh.dof_handler.n_dofs(),
                      n_cells   = mesh.triangulation.n_active_cells();
    DataOutBase::VtkFlags flags;
    flags.compression_level     = DataOutBase::VtkFlags::best_speed;
    flags.print_date_and_time   = false;
    const std::string directory = "snapshot_writer_repeated";
    std::filesystem::remove_all(directory);
    std::filesystem::create_directories(directory);

    std::mt19937              random(7);
    const std::vector<double> cells_a(n_cells, 0.0);
    std::vector<double>       cells_b = cells_a;
    cells_b[n_cells / 2]              = -0.0;
    const std::vector<double> u0      = random_values(n_dofs, random),
                              u1      = random_values(n_dofs, random);
    std::vector<std::vector<std::vector<double>>> series{
      {u0, cells_a, random_values(n_cells, random)},
      {u1, cells_a, {}},
      {u1, cells_a, {}},
      {u1, cells_b, {}}};
    for (unsigned int i = 1; i < series.size(); ++i)
      series[i][2] = series[0][2];
    AppUtilities::SnapshotTimings timings;
    {
      AppUtilities::SnapshotWriter<2> writer({n_dofs, n_cells, n_cells},
                                             configure,
                                             flags);
      for (unsigned int i = 0; i < series.size(); ++i)
        writer.write(directory + "/s" + std::to_string(i) + ".vtu", series[i]);
      writer.flush();
      timings = writer.timings();
    }
    for (unsigned int i = 0; i < series.size(); ++i)
      {
        std::vector<Vector<double>> vectors;
        for (const auto &v : series[i])
          vectors.emplace_back(v.begin(), v.end());
        DataOut<2> data_out;
        configure(data_out, vectors);
        data_out.set_flags(flags);
        std::ostringstream reference;
        data_out.write_vtu(reference);
        std::ifstream     file(directory + "/s" + std::to_string(i) + ".vtu",
                           std::ios::binary);
        std::stringstream text;
        text << file.rdbuf();
        check(text.str() == reference.str(),
              "snapshot " + std::to_string(i) +
                (i == 0 ? " (all arrays encoded)" :
                 i == 1 ? " (the displacement new, the cell fields kept)" :
                 i == 2 ? " (every array kept)" :
                          " (a cell field new by the sign of one zero)") +
                ": the file is DataOut::write_vtu's, byte for byte");
      }
    const AppUtilities::SnapshotTimings &t = timings;
    check(t.files == series.size() && t.waited >= 0 && t.preparing > 0 &&
            t.encoding > 0 && t.writing > 0 && t.completing >= 0 &&
            t.callbacks >= 0 && t.ahead >= 0,
          "the timings count " + std::to_string(t.files) +
            " files and positive times for the probes, the encoding and "
            "the writing");
    const std::string line = AppUtilities::describe_output_share(0.5, 2, &t);
    check(line.find("0.500 s of 2.000 s") != std::string::npos &&
            line.find("(25.0 %") != std::string::npos &&
            line.find(std::to_string(t.files) + " files") != std::string::npos,
          "the output share line says 0.5 s of 2 s is 25.0 % and counts "
          "the files: " +
            line);
  }

  // write_vtu() of a DataOutFaces (hyperelastic's boundary file): the
  // text outside the arrays and the decoded arrays of its own write_vtu().
  void
  faces_file(const unsigned int subdivisions)
  {
    std::cout << "write_vtu() of DataOutFaces, " << subdivisions
              << "^3 hexahedra" << std::endl;
    const Mesh<3> mesh(false, subdivisions);
    std::mt19937  random(subdivisions);
    const auto    values = random_values(mesh.dof_handler.n_dofs(), random);
    const Vector<double> u(values.begin(), values.end());
    DataOutFaces<3>      data_out;
    data_out.attach_dof_handler(mesh.dof_handler);
    data_out.add_data_vector(u,
                             std::vector<std::string>(3, "displacement"),
                             DataOutFaces<3>::type_dof_data,
                             vector_field<3>());
    data_out.build_patches(*mesh.mapping);
    DataOutBase::VtkFlags flags;
    flags.compression_level   = DataOutBase::VtkFlags::best_speed;
    flags.print_date_and_time = false;
    data_out.set_flags(flags);
    std::ostringstream reference;
    data_out.write_vtu(reference);
    const std::string path = "snapshot_writer_faces.vtu";
    AppUtilities::write_vtu(data_out, flags, path);
    std::ifstream     file(path, std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    std::string what;
    const bool  same = same_content(text.str(), reference.str(), what);
    check(same, what + " as in DataOutFaces::write_vtu's file");
  }

  // The queue's length follows the memory it may take (two snapshots at
  // least), and write() waits only when it is full: with the first
  // snapshot's callback held, at least N + 1 calls return (that callback
  // and N snapshots queued) and at most 2 N + 1 (N callbacks waiting, a
  // written snapshot whose callback waits for room, N - 1 snapshots
  // queued; how far the writer gets depends on the threads' timing), and
  // the next waits until the callback goes on.
  void
  queue_length()
  {
    std::cout << "the queue's length" << std::endl;
    const Mesh<2> mesh(false);
    const auto    configure = [&](DataOut<2>                        &data_out,
                               const std::vector<Vector<double>> &in) {
      data_out.attach_dof_handler(mesh.dof_handler);
      data_out.add_data_vector(in[0], "u");
      data_out.build_patches(*mesh.mapping);
    };
    const std::string directory = "snapshot_writer_queue";
    std::filesystem::remove_all(directory);
    std::filesystem::create_directories(directory);
    const std::size_t n_dofs = mesh.dof_handler.n_dofs(),
                      bytes  = n_dofs * sizeof(double);
    for (const unsigned int n : {2u, 5u})
      {
        const std::size_t room = n == 2 ? bytes : n * bytes + bytes / 2;
        AppUtilities::SnapshotWriter<2> writer({n_dofs},
                                               configure,
                                               DataOutBase::VtkFlags(),
                                               room);
        check(writer.queue_length() == n,
              "room for " + std::to_string(room) + " bytes of inputs (" +
                std::to_string(bytes) + " bytes a snapshot) gives a queue of " +
                std::to_string(writer.queue_length()) + ", expected " +
                std::to_string(n));
        std::mutex              mutex;
        std::condition_variable released_changed;
        bool                    released = false;
        std::atomic<unsigned>   returned{0};
        const unsigned int      expected = 2 * n + 1;
        std::thread             producer([&]() {
          for (unsigned int i = 0; i < expected + 2; ++i)
            {
              // Every snapshot has a callback: the first one waits.
              std::function<void()> after = []() {};
              if (i == 0)
                after = [&]() {
                  std::unique_lock<std::mutex> lock(mutex);
                  released_changed.wait(lock, [&]() {
                    return released;
                  });
                };
              writer.write(directory + "/q" + std::to_string(i) + ".vtu",
                           {std::vector<double>(n_dofs, i)},
                           after);
              ++returned;
            }
        });
        const auto start = std::chrono::steady_clock::now();
        while (returned < expected && std::chrono::steady_clock::now() - start <
                                        std::chrono::seconds(10))
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        // Time for a call beyond the bound to return, were it free to.
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        const unsigned int held = returned;
        {
          std::unique_lock<std::mutex> lock(mutex);
          released = true;
        }
        released_changed.notify_all();
        producer.join();
        writer.flush();
        check(held >= n + 1 && held <= expected && returned == expected + 2,
              "with the first callback held, write() returned " +
                std::to_string(held) + " times (at least " +
                std::to_string(n + 1) +
                ": it waits only when the queue is "
                "full; at most " +
                std::to_string(expected) + ": it does wait then), all " +
                std::to_string(returned) + " once it went on");
      }
  }
} // namespace

int
main()
{
  using Flags = DataOutBase::VtkFlags;
  // One block per array: the bytes of DataOut's file.
  for (const auto level : {Flags::best_speed, Flags::best_compression})
    {
      wave2d(false, 3, level);
      wave2d(true, 3, level);
      hyperelastic(false, 3, level);
      hyperelastic(true, 3, level);
    }
  // Several blocks per array: the decoded content of DataOut's file.
  for (const auto level : {Flags::best_speed,
                           Flags::default_compression,
                           Flags::best_compression,
                           Flags::no_compression})
    wave2d(false, 60, level);
  wave2d(true, 40, Flags::best_speed);
  hyperelastic(false, 12, Flags::best_speed);
  hyperelastic(true, 8, Flags::best_compression);
  single_file(2, Flags::best_compression);
  single_file(8, Flags::best_compression);
  single_file(8, Flags::best_speed);
  compression_entry();
  files_and_errors();
  ahead_work();
  repeated_inputs();
  faces_file(3);
  faces_file(20);
  queue_length();
  if (n_failures != 0)
    {
      std::cout << n_failures << " check(s) failed" << std::endl;
      return 1;
    }
  std::cout << "All checks passed." << std::endl;
  return 0;
}
