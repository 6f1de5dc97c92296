// SPDX-License-Identifier: LGPL-2.1-or-later
// The apps' SnapshotWriter against deal.II's DataOut::write_vtu() on the
// output set-ups of the apps (wave2d: a 2d displacement and two cell fields,
// compressed for speed; hyperelastic: displacement, velocity and two cell
// fields in 3d, default compression; on quadrilaterals/hexahedra and
// simplices): the file bytes must be equal. Then the files of write(), the
// order of the callbacks, and an error on the writer thread thrown by
// flush() with the file's name.

#include "snapshot_writer.h"

#include <deal.II/base/data_out_base.h>

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

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>

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

  template <int dim>
  void
  compare(
    const std::string                                           &name,
    const std::vector<std::size_t>                              &sizes,
    const typename AppUtilities::SnapshotWriter<dim>::Configure &configure,
    DataOutBase::VtkFlags                                        flags)
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
        const std::string ours = writer.vtu(inputs);
        const std::size_t at   = first_difference(ours, reference.str());
        check(ours == reference.str(),
              "snapshot " + std::to_string(snapshot) + ": " +
                std::to_string(ours.size()) +
                " bytes equal to DataOut::write_vtu's " +
                std::to_string(reference.str().size()) +
                (ours == reference.str() ?
                   std::string() :
                   " (first difference at byte " + std::to_string(at) + ")"));
      }
  }

  template <int dim>
  struct Mesh
  {
    Triangulation<dim>             triangulation;
    std::unique_ptr<FESystem<dim>> fe;
    std::unique_ptr<Mapping<dim>>  mapping;
    DoFHandler<dim>                dof_handler;

    explicit Mesh(const bool simplex)
    {
      if (simplex)
        {
          GridGenerator::subdivided_hyper_cube_with_simplices(triangulation, 3);
          fe      = std::make_unique<FESystem<dim>>(FE_SimplexP<dim>(1), dim);
          mapping = std::make_unique<MappingFE<dim>>(FE_SimplexP<dim>(1));
        }
      else
        {
          GridGenerator::subdivided_hyper_cube(triangulation, 3);
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

  // wave2d's snapshot: displacement, material id and damping per cell.
  void
  wave2d(const bool simplex)
  {
    const Mesh<2> mesh(simplex);
    const auto    configure = [&](DataOut<2>                        &data_out,
                               const std::vector<Vector<double>> &in) {
      data_out.attach_dof_handler(mesh.dof_handler);
      data_out.add_data_vector(in[0],
                               std::vector<std::string>(2, "displacement"),
                               DataOut<2>::type_dof_data,
                               vector_field<2>());
      data_out.add_data_vector(in[1], "material_id");
      data_out.add_data_vector(in[2], "absorbing_damping");
      data_out.build_patches(*mesh.mapping);
    };
    DataOutBase::VtkFlags flags;
    flags.compression_level   = DataOutBase::VtkFlags::best_speed;
    const std::size_t n_cells = mesh.triangulation.n_active_cells();
    compare<2>(std::string("wave2d, ") +
                 (simplex ? "triangles" : "quadrilaterals"),
               {mesh.dof_handler.n_dofs(), n_cells, n_cells},
               configure,
               flags);
  }

  // hyperelastic's output: displacement, velocity, J and von Mises stress.
  void
  hyperelastic(const bool simplex)
  {
    const Mesh<3> mesh(simplex);
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
    compare<3>(std::string("hyperelastic, ") +
                 (simplex ? "tetrahedra" : "hexahedra"),
               {n_dofs, n_dofs, n_cells, n_cells},
               configure,
               DataOutBase::VtkFlags());
  }

  // The files of write() hold what vtu() returns (up to the date line),
  // each callback runs after its file is complete, and an error on the
  // writer thread reaches flush() with the file's name.
  void
  files_and_errors()
  {
    std::cout << "write(), callbacks and errors" << std::endl;
    const Mesh<2> mesh(false);
    const auto    configure = [&](DataOut<2>                        &data_out,
                               const std::vector<Vector<double>> &in) {
      data_out.attach_dof_handler(mesh.dof_handler);
      data_out.add_data_vector(in[0], "u");
      data_out.build_patches(*mesh.mapping);
    };
    const std::string directory = "snapshot_writer_output";
    std::filesystem::remove_all(directory);
    std::filesystem::create_directories(directory);
    std::mt19937             random(1);
    DataOutBase::VtkFlags    flags;
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
  }
} // namespace

int
main()
{
  wave2d(false);
  wave2d(true);
  hyperelastic(false);
  hyperelastic(true);
  files_and_errors();
  if (n_failures != 0)
    {
      std::cout << n_failures << " check(s) failed" << std::endl;
      return 1;
    }
  std::cout << "All checks passed." << std::endl;
  return 0;
}
