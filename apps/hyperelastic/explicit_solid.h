// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_explicit_solid_h
#define hyperelastic_explicit_solid_h

#include <deal.II/base/point.h>

#include <deal.II/grid/tria.h>

#include <gpu_assembly/base/central_difference_stepper.h>
#include <gpu_assembly/tled/tled_model.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "explicit_surface_loads.h"
#include "parameters.h"
#include "snapshot_writer.h"
#include "surface_loads.h"

namespace Hyperelastic
{
  using namespace dealii;

  class SurfaceLoadAmplitudes;

  /**
   * One line of the trace: time, the force on the displaced region (the
   * sum of the internal forces at its nodes, i.e. what the region must
   * apply; with no displaced region the applied load) and the displacement
   * of the node nearest the body's centre.
   */
  struct TracePoint
  {
    double                step = 0;
    double                time = 0;
    std::array<double, 3> force{{0, 0, 0}};
    std::array<double, 3> centre_displacement{{0, 0, 0}};
  };



  /**
   * The explicit integrator of the app (`Time integration = explicit`):
   * Total Lagrangian Explicit Dynamics of the same neo-Hookean solid on the
   * same meshes, through the plugin's TLED steppers (GPU or host), with the
   * app's boundary conditions (fixed ids and region, a load region),
   * rollers, a ramped prescribed displacement, VTU output and a trace.
   */
  class ExplicitSolid
  {
  public:
    static constexpr int dim = 3;

    ExplicitSolid(const Parameters &parameters, std::ostream &out = std::cout);
    ~ExplicitSolid();

    /// Mesh, model, boundary conditions and stepper.
    void
    setup();

    /// Set up, step to the end time with output and trace, summarize.
    void
    run();

    /**
     * The step forces of the surface loads at step @p n and the
     * displacement @p u (3 values per node), 3 values per node: the
     * forces the host stepper adds in that step.
     */
    std::vector<double>
    surface_forces(const unsigned int n, const std::vector<double> &u) const;

    /// Advance @p n_steps (no output).
    void
    advance(const unsigned int n_steps);

    /// Displacement u_n, 3 values per vertex.
    std::vector<double>
    displacement() const;

    /// The trace point of the current state.
    TracePoint
    trace_point() const;

    const std::vector<TracePoint> &
    trace() const
    {
      return trace_points;
    }

    const Triangulation<dim> &
    get_triangulation() const
    {
      return triangulation;
    }

    /// The model in double (the host's energies and forces use it).
    const GPUAssembly::TLED::Model<double> &
    model() const
    {
      return model_double;
    }

    double
    time_step() const
    {
      return dt;
    }

    unsigned int
    step() const;

    /// Where the steps run (one line).
    std::string
    description() const
    {
      return execution;
    }

    /// Wall time of the stepping in run(), without output.
    double
    stepping_wall_time() const
    {
      return stepping_seconds;
    }

  private:
    void
    make_grid();
    void
    make_boundary_conditions();
    /// The 'Surface loads' as the steppers' step forces.
    void
    make_surface_loads();
    /// Their amplitudes at a time.
    SurfaceLoadSchedule
    surface_schedule() const;
    /// Queue the state of step @p step_number for output (the VTU and the
    /// .pvd series, written on the snapshot writer's thread); returns the
    /// VTU's path.
    std::string
    write_output(const unsigned int         step_number,
                 const std::vector<double> &u_prev,
                 const std::vector<double> &u_curr);
    /// Wait for the queued output; throw the error of a file that failed.
    void
    finish_output();

    /// What is wrong with a state, if anything: an entry that is not
    /// finite (the first node named), or an inverted element.
    struct StateCheck
    {
      std::string  problem;
      bool         finite    = true;
      double       minimum_J = 1;
      unsigned int element   = 0;
    };
    StateCheck
    check_state(const std::vector<double> &u_prev,
                const std::vector<double> &u_curr) const;
    void
    write_trace() const;

    const Parameters   parameters;
    std::ostream      &out;
    Triangulation<dim> triangulation;

    GPUAssembly::TLED::Model<double>      model_double;
    GPUAssembly::TLED::BoundaryConditions boundary_conditions;
    double                                dt = 0;
    std::vector<unsigned int>             displaced_nodes;
    unsigned int                          centre_node = 0;
    std::vector<double>                   load_total{0, 0, 0};
    /// The surface loads in the steppers' indexing
    /// (make_vertex_surface_load_data()), and their time functions.
    SurfaceLoadData                        surface_loads;
    std::shared_ptr<SurfaceLoadAmplitudes> surface_amplitudes;

    // The TLED stepper, whatever its number type, and its
    // TLED::Stepper::non_finite_node().
    std::unique_ptr<GPUAssembly::CentralDifferenceStepper> stepper;
    std::function<unsigned int()>                          non_finite_node;
    std::string                                            execution;

    std::vector<TracePoint>                     trace_points;
    std::vector<std::pair<double, std::string>> pvd_records;
    double                                      stepping_seconds = 0;
    /// The VTU series, made at the first output, and for every DoF of its
    /// displacement field the entry 3 * vertex + component of the state.
    std::unique_ptr<AppUtilities::SnapshotWriter<dim>> snapshot_writer;
    std::vector<unsigned int>                          output_state_entry;
  };
} // namespace Hyperelastic

#endif
