// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef wave2d_simulation_h
#define wave2d_simulation_h

#include <deal.II/base/conditional_ostream.h>
#include <deal.II/base/timer.h>

#include <deal.II/grid/tria.h>

#include <gpu_assembly/wave/wave_discretization.h>
#include <gpu_assembly/wave/wave_stepper.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "parameters.h"
#include "snapshot_writer.h"

namespace Wave2D
{
  /**
   * One run of the explicit elastic wave solver: mesh, set-up, time
   * stepping on the GPU or the host, snapshots, receiver traces and
   * checkpoints, as the parameter file says.
   */
  class Simulation
  {
  public:
    explicit Simulation(const Parameters &parameters);

    void
    run();

  private:
    void
    make_grid();

    void
    setup();

    template <typename Number>
    void
    time_loop();

    /// Make the snapshot writer, whose thread builds the files' geometry
    /// at once; the DoFHandler and the mapping are final.
    void
    start_snapshot_writer();

    /// Queue the snapshot of @p u at @p step; the VTU, the .pvd record
    /// naming it and the image are written on the snapshot writer's
    /// thread.
    void
    write_snapshot(const unsigned int step, const std::vector<double> &u);

    /// Wait for the queued snapshots; throw the error of one that failed.
    void
    finish_snapshots() const;

    void
    write_traces(const std::vector<double> &history) const;

    /// The summary line on the share of the wall time output cost the
    /// time loop: the "Output" sections of the timer, with the writer's
    /// work beside it.
    void
    print_output_share() const;

    void
    write_checkpoint(const unsigned int         step,
                     const std::vector<double> &u_previous,
                     const std::vector<double> &u_current,
                     const std::vector<double> &history,
                     const unsigned int         precision) const;

    void
    read_checkpoint(unsigned int        &step,
                    std::vector<double> &u_previous,
                    std::vector<double> &u_current,
                    std::vector<double> &history,
                    const unsigned int   precision);

    std::uint64_t
    fingerprint() const;

    /// Whether the point (@p x, @p y) lies in a cell of the mesh.
    bool
    inside_mesh(const double x, const double y) const;

    /// A state that passed the finiteness check, and whether it is
    /// written as a snapshot.
    struct FiniteState
    {
      unsigned int        step;
      std::vector<double> u_previous, u_current;
      bool                written;
    };

    /// Stop the run at @p step, where @p what is not finite: write the
    /// last finite state and the first @p n_finite_records values of the
    /// receiver @p history, then throw a message naming the step, @p what
    /// and the likely cause.
    [[noreturn]] void
    stop_on_non_finite(const unsigned int         step,
                       const std::string         &what,
                       const FiniteState         &last_finite,
                       const std::vector<double> &history,
                       const std::size_t          n_finite_records,
                       const unsigned int         precision);

    const Parameters           parameters;
    dealii::ConditionalOStream pcout;
    dealii::TimerOutput        timer;
    // The start of the run, for the output share of the wall time.
    const std::chrono::steady_clock::time_point started;

    dealii::Triangulation<2>                          tria;
    std::map<std::string, dealii::types::material_id> element_sets;
    GPUAssembly::Wave::WaveDiscretization             discretization;
    GPUAssembly::Wave::WaveMesh                       mesh;
    std::vector<GPUAssembly::Wave::ElasticMaterial>   materials;
    GPUAssembly::Wave::NodalSystem                    system;
    GPUAssembly::Wave::NodeBlocks                     blocks;
    std::vector<GPUAssembly::Wave::Source>            sources;
    std::vector<unsigned int>                         receiver_nodes;
    double                                            time_step        = 0;
    double                                            stable_time_step = 0;
    unsigned int                                      n_steps          = 0;
    bool                                              use_gpu          = false;
    std::vector<std::pair<double, std::string>>       snapshots;
    // Made at the first snapshot, when the mesh is final.
    std::unique_ptr<AppUtilities::SnapshotWriter<2>> snapshot_writer;
  };
} // namespace Wave2D

#endif
