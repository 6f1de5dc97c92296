// SPDX-License-Identifier: LGPL-2.1-or-later
// The apps' VTU output per snapshot: AppUtilities::SnapshotWriter (point
// data converted, compressed in blocks and encoded on deal.II's task
// threads) on one thread and on all, against deal.II's DataOut::write_vtu()
// (patches built, arrays compressed whole on one thread), at the
// compression levels of 'Output/Compression', on the output set-ups of
// wave2d (displacement and two cell fields on triangles) and hyperelastic
// (displacement, velocity, J and von Mises stress on tetrahedra).
//   vtu_output_benchmark [N2D] [NX,NY,NZ] [REPETITIONS]
// Defaults: 228 (about 104,000 triangles of a 228 x 228 square, split:
// the size of wave2d's default plate), 30,10,10 (the bar of
// benchmarks/hyperelastic/picture.prm), 5 repetitions (the best kept).

#include <deal.II/base/multithread_info.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping_fe.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/tria.h>

#include <deal.II/lac/vector.h>

#include <deal.II/numerics/data_out.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "snapshot_writer.h"

using namespace dealii;

namespace
{
  using Level = DataOutBase::VtkFlags::ZlibCompressionLevel;

  // The best of @p repetitions runs of @p f, in milliseconds.
  template <typename F>
  double
  best_ms(const unsigned int repetitions, const F &f)
  {
    double best = 1e300;
    for (unsigned int r = 0; r < repetitions; ++r)
      {
        const auto start = std::chrono::steady_clock::now();
        f();
        best = std::min(best,
                        std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
      }
    return best;
  }

  template <int dim>
  void
  measure(
    const std::string                                           &name,
    const Triangulation<dim>                                    &tria,
    const std::vector<std::size_t>                              &sizes,
    const typename AppUtilities::SnapshotWriter<dim>::Configure &configure,
    const unsigned int                                           repetitions)
  {
    std::mt19937                           random(1);
    std::uniform_real_distribution<double> value(-1., 1.);
    std::vector<std::vector<double>>       inputs;
    std::vector<Vector<double>>            vectors;
    for (const std::size_t size : sizes)
      {
        inputs.emplace_back(size);
        for (double &v : inputs.back())
          v = value(random);
        vectors.emplace_back(inputs.back().begin(), inputs.back().end());
      }
    const unsigned int n_threads = MultithreadInfo::n_threads();
    std::cout << name << ": " << tria.n_active_cells() << " cells\n"
              << "| level | DataOut::write_vtu [ms] | SnapshotWriter, 1 "
              << "thread [ms] | SnapshotWriter, " << n_threads
              << " threads [ms] | file [MB] |\n|---|---|---|---|---|\n";
    const std::vector<std::pair<Level, std::string>> levels{
      {DataOutBase::VtkFlags::best_speed, "best speed"},
      {DataOutBase::VtkFlags::default_compression, "default"},
      {DataOutBase::VtkFlags::best_compression, "best compression"}};
    for (const auto &[level, level_name] : levels)
      {
        DataOutBase::VtkFlags flags;
        flags.compression_level                   = level;
        const double                      dataout = best_ms(repetitions, [&]() {
          DataOut<dim> data_out;
          configure(data_out, vectors);
          data_out.set_flags(flags);
          std::ostringstream out;
          data_out.write_vtu(out);
        });
        AppUtilities::SnapshotWriter<dim> writer(sizes, configure, flags);
        std::size_t                       bytes = writer.vtu(inputs).size();
        MultithreadInfo::set_thread_limit(1);
        const double one = best_ms(repetitions, [&]() {
          bytes = writer.vtu(inputs).size();
        });
        MultithreadInfo::set_thread_limit(n_threads);
        const double all = best_ms(repetitions, [&]() {
          bytes = writer.vtu(inputs).size();
        });
        std::printf("| %s | %.1f | %.1f | %.1f | %.2f |\n",
                    level_name.c_str(),
                    dataout,
                    one,
                    all,
                    bytes / 1e6);
      }
    std::cout << std::endl;
  }

  std::vector<DataComponentInterpretation::DataComponentInterpretation>
  vector_field(const unsigned int dim)
  {
    return std::vector<
      DataComponentInterpretation::DataComponentInterpretation>(
      dim,
      DataComponentInterpretation::component_is_part_of_vector);
  }
} // namespace

int
main(int argc, char **argv)
{
  try
    {
      const unsigned int        n2d = argc > 1 ? std::stoul(argv[1]) : 228;
      std::vector<unsigned int> n3d{30, 10, 10};
      if (argc > 2)
        {
          std::istringstream in(argv[2]);
          char               comma;
          AssertThrow(in >> n3d[0] >> comma >> n3d[1] >> comma >> n3d[2],
                      ExcMessage("The 3d subdivisions must read NX,NY,NZ, "
                                 "not '" +
                                 std::string(argv[2]) + "'."));
        }
      const unsigned int repetitions = argc > 3 ? std::stoul(argv[3]) : 5;

      {
        Triangulation<2> tria;
        GridGenerator::subdivided_hyper_cube_with_simplices(tria, n2d);
        const FESystem<2>  fe(FE_SimplexP<2>(1), 2);
        const MappingFE<2> mapping(FE_SimplexP<2>(1));
        DoFHandler<2>      dof_handler(tria);
        dof_handler.distribute_dofs(fe);
        measure<2>(
          "wave2d's snapshot",
          tria,
          {dof_handler.n_dofs(), tria.n_active_cells(), tria.n_active_cells()},
          [&](DataOut<2> &data_out, const std::vector<Vector<double>> &in) {
            data_out.attach_dof_handler(dof_handler);
            data_out.add_data_vector(in[0],
                                     std::vector<std::string>(2,
                                                              "displacement"),
                                     DataOut<2>::type_dof_data,
                                     vector_field(2));
            data_out.add_data_vector(in[1], "material_id");
            data_out.add_data_vector(in[2], "absorbing_damping");
            data_out.build_patches(mapping);
          },
          repetitions);
      }
      {
        Triangulation<3> tria;
        GridGenerator::subdivided_hyper_rectangle_with_simplices(tria,
                                                                 n3d,
                                                                 Point<3>(),
                                                                 Point<3>(3,
                                                                          1,
                                                                          1));
        const FESystem<3>  fe(FE_SimplexP<3>(1), 3);
        const MappingFE<3> mapping(FE_SimplexP<3>(1));
        DoFHandler<3>      dof_handler(tria);
        dof_handler.distribute_dofs(fe);
        const std::size_t n_dofs  = dof_handler.n_dofs(),
                          n_cells = tria.n_active_cells();
        measure<3>(
          "hyperelastic's output",
          tria,
          {n_dofs, n_dofs, n_cells, n_cells},
          [&](DataOut<3> &data_out, const std::vector<Vector<double>> &in) {
            data_out.attach_dof_handler(dof_handler);
            data_out.add_data_vector(in[0],
                                     std::vector<std::string>(3,
                                                              "displacement"),
                                     DataOut<3>::type_dof_data,
                                     vector_field(3));
            data_out.add_data_vector(in[1],
                                     std::vector<std::string>(3, "velocity"),
                                     DataOut<3>::type_dof_data,
                                     vector_field(3));
            data_out.add_data_vector(in[2], "J", DataOut<3>::type_cell_data);
            data_out.add_data_vector(in[3],
                                     "von_Mises_stress",
                                     DataOut<3>::type_cell_data);
            data_out.build_patches(mapping);
          },
          repetitions);
      }
    }
  catch (const std::exception &e)
    {
      std::cerr << "vtu_output_benchmark: " << e.what() << std::endl;
      return 1;
    }
  return 0;
}
