// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_hyperelastic_solid_h
#define hyperelastic_hyperelastic_solid_h

#include <deal.II/base/conditional_ostream.h>
#include <deal.II/base/function.h>
#include <deal.II/base/quadrature.h>
#include <deal.II/base/tensor.h>
#include <deal.II/base/timer.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping.h>

#include <deal.II/grid/tria.h>

#include <deal.II/lac/affine_constraints.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "integrator_backend.h"
#include "parameters.h"

namespace Hyperelastic
{
  using namespace dealii;

  /**
   * Thrown when a run cannot go on (an inverted element, a Newton iteration
   * that diverges): the message says at which step and element, and the
   * last good state has been written before.
   */
  DeclException1(ExcSimulationStopped,
                 std::string,
                 << "The simulation stopped: " << arg1);

  /**
   * Counters of a run, for the summary, the tests and the benchmark.
   */
  struct RunStatistics
  {
    unsigned int             n_steps               = 0;
    unsigned int             n_newton_iterations   = 0;
    unsigned int             n_cg_iterations       = 0;
    unsigned int             max_newton_iterations = 0;
    double                   stepping_wall_time    = 0;
    double                   last_newton_residual  = 0;
    std::vector<std::string> output_files;
  };



  /**
   * A compressible neo-Hookean solid integrated in time with the midpoint
   * rule of the GPU Gems chapter (Sec. 16.4.1): deal.II holds the mesh, the
   * DoFs, the constraints and the output; the plugin's adapter turns them
   * into flat arrays once; a backend (all on the GPU, or all on the host)
   * runs the steps. Vectors come back from the device only when output or
   * a diagnostic is due.
   */
  class HyperelasticSolid
  {
  public:
    static constexpr int dim = 3;

    HyperelasticSolid(const Parameters &parameters,
                      std::ostream     &out = std::cout);

    /// Set up and run the whole simulation, with output and a summary.
    void
    run();

    /// Mesh, DoFs, arrays, backend and initial state (run() calls it).
    void
    setup();

    /// One time (or load) step; throws ExcSimulationStopped on failure.
    void
    do_step();

    double
    current_time() const
    {
      return time;
    }

    /// Displacement and momentum at the last completed step, per DoF
    /// (copies from the device).
    std::pair<std::vector<double>, std::vector<double>>
    state() const;

    /// Kinetic energy sum p^2 / (2 m) of the lumped mass.
    double
    kinetic_energy(const std::vector<double> &p) const;

    /// Stored energy: the integral of W(F) over the reference body.
    double
    strain_energy(const std::vector<double> &u) const;

    /// Total linear momentum, summed per component over the nodes.
    Tensor<1, dim>
    linear_momentum(const std::vector<double> &p) const;

    /**
     * Mean displacement of the nodes of the load region (zero if it holds
     * none): the loaded end's deflection, and with the total load F the
     * work F . u of a load constant since the start.
     */
    Tensor<1, dim>
    load_region_displacement(const std::vector<double> &u) const;

    const RunStatistics &
    statistics() const
    {
      return stats;
    }

    const GPUAssembly::MeshArrays &
    arrays() const
    {
      return adapter.get_arrays();
    }

    /// Where the steps run (one line).
    std::string
    backend_description() const;

    /// Per-stage wall times so far.
    TimerOutput &
    timer_output()
    {
      return timer;
    }

    /**
     * Seconds per stage so far: the host's timers, with the steps that ran
     * whole on the device (one graph launch each) split into the stages by
     * the device's own clock, and the rest of their wall time (launch,
     * report copy) counted as transfers.
     */
    std::map<std::string, double>
    stage_times() const;

    /// Restart the timers (host and device) from zero.
    void
    reset_timers();

  private:
    void
    make_grid();
    /// 'Local refinement steps' near the clamp and the load (hexahedra).
    void
    refine_near_clamp_and_load();
    void
    setup_system();
    void
    setup_backend();
    void
    set_initial_state();
    StepLoads
    loads_at(const double t_new) const;
    // The Newton loop driven from the host, stage by stage.
    StepReport
    newton_loop(const StepLoads &loads);
    void
    write_output(const std::vector<double> &u,
                 const std::vector<double> &p,
                 const unsigned int         step_number);
    // Cell-wise J and von Mises stress (averaged over quadrature points).
    void
    compute_cell_fields(const std::vector<double> &u,
                        Vector<double>            &J,
                        Vector<double>            &von_mises) const;
    // The element with the smallest J for displacement u, its J, a text.
    std::pair<double, std::string>
    find_worst_element(const std::vector<double> &u) const;
    [[noreturn]] void
    stop(const std::string &reason);

    const Parameters   parameters;
    ConditionalOStream pcout;
    TimerOutput        timer;
    /// TimerOutput section of the steps run whole on the device.
    static constexpr const char *step_graph_section = "Step (one device graph)";

    Triangulation<dim>                  triangulation;
    std::unique_ptr<FESystem<dim>>      fe;
    std::unique_ptr<Mapping<dim>>       mapping;
    std::unique_ptr<Quadrature<dim>>    quadrature;
    DoFHandler<dim>                     dof_handler;
    AffineConstraints<double>           constraints;
    GPUAssembly::DoFHandlerAdapter<dim> adapter;

    /// Nodes of the load region, which share the nodal load equally.
    std::vector<unsigned int> loaded_nodes;

    BackendData                        backend_data;
    std::unique_ptr<IntegratorBackend> backend;
    std::unique_ptr<Function<1>>       load_function;

    double                                      time        = 0;
    unsigned int                                step_number = 0;
    bool                                        dynamic     = true;
    RunStatistics                               stats;
    std::vector<std::pair<double, std::string>> pvd_records;
  };
} // namespace Hyperelastic

#endif
