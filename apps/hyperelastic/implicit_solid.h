// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_implicit_solid_h
#define hyperelastic_implicit_solid_h

#include <deal.II/base/conditional_ostream.h>
#include <deal.II/base/function.h>
#include <deal.II/base/index_set.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/point.h>
#include <deal.II/base/quadrature.h>
#include <deal.II/base/tensor.h>
#include <deal.II/base/timer.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping.h>

#include <deal.II/grid/tria.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>

#include <array>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "integrator_backend.h"
#include "parameters.h"
#include "snapshot_writer.h"
#include "solid_common.h"

namespace Hyperelastic
{
  class BoundarySeries;

  using namespace dealii;

  class SurfaceLoadAmplitudes;

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
    unsigned int n_steps             = 0;
    unsigned int n_newton_iterations = 0;
    /// The linear solver's iterations: CG's, one per direct solve.
    unsigned int n_cg_iterations = 0;
    /// The linear solver that ran them.
    LinearSolver             linear_solver         = LinearSolver::cg_jacobi;
    unsigned int             max_newton_iterations = 0;
    double                   stepping_wall_time    = 0;
    double                   last_newton_residual  = 0;
    std::vector<std::string> output_files;
  };



  /**
   * A compressible neo-Hookean solid integrated in time with the midpoint
   * rule of the GPU Gems chapter (Sec. 16.4.1), on one process or on the
   * ranks of an MPI communicator. deal.II holds the mesh, the DoFs, the
   * constraints and the output; the plugin's adapter turns them into flat
   * arrays once; an IntegratorBackend runs the steps, and the Newton loop
   * over its operations is the same for all of them.
   *
   * On one process the mesh is a serial Triangulation (Cuthill-McKee
   * numbering) and the backend runs every stage on the GPU (a whole step as
   * one CUDA graph launch where it can) or on the host. On a communicator,
   * the built-in hexahedral bar lives on a parallel::distributed::
   * Triangulation (p4est; 'Local refinement steps' with hanging nodes),
   * tetrahedral meshes on a parallel::fullydistributed::Triangulation made
   * from the serial mesh (METIS partition); each rank assembles its cells
   * with the plugin's DistributedAssembler, on its GPU or on the host, and
   * the resident or the Trilinos backend ('Execution/Distributed linear
   * algebra') holds the linear algebra. Screen output comes from the first
   * rank; files are one .vtu per output on one process, one .vtu per rank
   * with a .pvtu record per output on a communicator, and the .pvd series.
   * Vectors come back from the backend only when output or a diagnostic is
   * due.
   *
   * On a communicator of one rank it solves the same discrete problem as
   * on one process, to the solver's tolerances.
   */
  class ImplicitSolid
  {
  public:
    static constexpr int dim = 3;

    /// On one process, with a serial Triangulation.
    ImplicitSolid(const Parameters &parameters, std::ostream &out = std::cout);

    /// On the ranks of @p communicator, with a distributed triangulation;
    /// collective over @p communicator from here on.
    ImplicitSolid(const Parameters &parameters,
                  const MPI_Comm    communicator,
                  std::ostream     &out = std::cout);

    ~ImplicitSolid();

    /// Set up and run the whole simulation, with output and a summary.
    void
    run();

    /// Mesh, DoFs, constraints, adapter, backend and initial state (run()
    /// calls it).
    void
    setup();

    /// One time (or load) step; throws ExcSimulationStopped on failure
    /// (on every rank, the last good state written).
    void
    do_step();

    double
    current_time() const
    {
      return time;
    }

    /// Displacement and momentum at the last completed step, the locally
    /// owned entries (every DoF on one process; copies from the backend).
    std::pair<std::vector<double>, std::vector<double>>
    state() const;

    /// Displacement and momentum at one node (a vertex) of the mesh.
    struct NodalState
    {
      Point<dim>     position;
      Tensor<1, dim> u;
      Tensor<1, dim> p;
    };

    /**
     * The state at the last completed step at every node, on rank @p root
     * (an empty vector elsewhere), in no particular order: the numbering of
     * the DoFs depends on the partition, the positions do not.
     */
    std::vector<NodalState>
    gather_nodal_state(const unsigned int root = 0) const;

    /// Diagnostics of the last completed step, the same on every rank.
    /// Kinetic energy sum p^2 / (2 m) of the lumped mass.
    double
    kinetic_energy() const;
    /// Stored energy: the integral of W(F) over the reference body.
    double
    strain_energy() const;
    /// Total linear momentum, summed per component over the nodes.
    Tensor<1, dim>
    linear_momentum() const;
    /**
     * Mean displacement of the nodes of the load region (zero if it holds
     * none): the loaded end's deflection, and with the total load F the
     * work F . u of a load constant since the start.
     */
    Tensor<1, dim>
    load_region_displacement() const;

    /**
     * The force on one region of the boundary conditions: for a prescribed
     * displacement, a roller or the fixed boundary the reaction (the
     * internal minus the external force, summed over the DoFs it holds:
     * the force its support exerts on the body; in dynamic mode without
     * the inertia of those DoFs), for the load region the applied nodal
     * force; and the mean displacement of the region's nodes.
     */
    struct RegionForce
    {
      /// "Prescribed displacements '1: x = 0.1*t'", "Rollers '0: x'",
      /// "Fixed boundary", "Load region".
      std::string    name;
      Tensor<1, dim> force;
      Tensor<1, dim> mean_displacement;
    };

    /// The forces of every region at the last completed step (the
    /// prescribed displacements', the rollers', the fixed boundary's where
    /// it holds DoFs, the load region's where it has a load). Collective.
    std::vector<RegionForce>
    region_forces() const;

    /// Load steps cut in half so far (quasi-static mode).
    unsigned int
    n_step_cuts() const
    {
      return step_cuts;
    }

    const RunStatistics &
    statistics() const
    {
      return stats;
    }

    types::global_dof_index
    n_dofs() const;

    /// The adapter's arrays: on one process all DoFs and nodes, on a
    /// communicator the rank's local part.
    const GPUAssembly::MeshArrays &
    arrays() const;

    /// Where the steps run (one line).
    std::string
    backend_description() const;

    /// The linear solver of the Newton iterations, 'auto' resolved.
    LinearSolver
    linear_solver() const;

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
    /// An owned node: its position and its DoFs, one per component.
    struct OwnedNode
    {
      Point<dim>                               position;
      std::array<types::global_dof_index, dim> dofs;
    };

    void
    make_grid();
    /// 'Local refinement steps' near the clamp and the load (hexahedra).
    void
    refine_near_clamp_and_load();
    void
    setup_system();
    /// The lumped mass and the load pattern of the owned DoFs.
    void
    make_mass_and_load();
    /// The faces of 'Surface loads' and their data for the backend.
    void
    make_surface_loads();
    /// The loads of the step from the current time to @p t_new.
    StepLoads
    step_loads(const double t_new);
    void
    check_constraints(const bool has_load) const;
    void
    setup_backend();
    /**
     * The linear solver's set-up at the initial state and the first step's
     * loads (the device direct solver's analysis), and the log lines that
     * name the backend and the solver, and why.
     */
    void
    setup_linear_solver();
    void
    set_initial_state();
    /// Time per step of each stage of the Newton loop and of the
    /// exchanges, on rank 0's stream. Collective.
    void
    print_stage_split() const;
    /// Stages of the steps run as device graphs, by the device's clock.
    void
    print_device_stages() const;
    /// On one process: starts the VTU series' writer and the preparation
    /// of the boundary files on threads of their own, so that the geometry
    /// of both is built while the set-up goes on (once; the DoFs are
    /// final).
    void
    start_output_writers();
    /// Writes the state @p u, @p p (owned entries). Collective.
    void
    write_output(const std::vector<double> &u, const std::vector<double> &p);
    /// Cell-wise J and von Mises stress, averaged over the quadrature
    /// points, of the displacement @p u (owned entries): one value per
    /// active cell, set on the rank's cells. Reads only the fixed mesh and
    /// @p u, so the snapshot writer's thread may call it.
    void
    cell_fields(const std::vector<double> &u,
                std::vector<double>       &J,
                std::vector<double>       &von_mises) const;
    /// Waits for the output files written on the snapshot writer's thread
    /// and throws the error of one that failed.
    void
    finish_output();
    /// "  output FILE: max |u| = ..." for the state @p u, @p p. Collective.
    void
    summarize_state(const std::vector<double> &u,
                    const std::vector<double> &p) const;
    /**
     * Calls @p f for every locally owned cell with the gradients of the
     * displacement @p u (owned entries) at the quadrature points, in the
     * order of the active cells; @p fe_values is reinitialized on the cell.
     * With @p cells, only those (locally owned, in active-cell order).
     */
    void
    for_each_cell_gradient(
      const std::vector<double> &u,
      const UpdateFlags          flags,
      const std::function<
        void(const typename DoFHandler<dim>::active_cell_iterator &,
             const FEValues<dim> &,
             const std::vector<Tensor<2, dim>> &)>                      &f,
      const std::vector<typename DoFHandler<dim>::active_cell_iterator> *cells =
        nullptr) const;
    /**
     * The gradients of the displacement @p u (owned entries) at the
     * quadrature points of every locally owned cell, with the cells spread
     * over the threads of deal.II's task scheduler on one process (one
     * after the other on several ranks): @p f is given the cell's position
     * in the locally owned active cells, the cell, its JxW values and the
     * gradients, and may run for several cells at once, so it writes only
     * what is its cell's. On one process the gradients come from
     * cell_gradient_cache where it is built, bit for bit those of FEValues.
     */
    void
    for_each_cell_gradient_concurrently(
      const std::vector<double> &u,
      const std::function<
        void(std::size_t,
             const typename DoFHandler<dim>::active_cell_iterator &,
             const double *,
             const std::vector<Tensor<2, dim>> &)> &f) const;
    /// Builds cell_gradient_cache from FEValues, checked against
    /// FEValues' gradients of @p u; leaves it empty where it would take
    /// more than cell_gradient_cache_limit bytes or differs.
    void
    build_cell_gradient_cache(const Vector<double> &u) const;
    /// The smallest J over all ranks' quadrature points for displacement
    /// @p u (owned entries) and where it is. Collective.
    std::pair<double, std::string>
    find_worst_element(const std::vector<double> &u) const;
    [[noreturn]] void
    stop(const std::string &reason);
    /**
     * One attempt at the step from the current time to @p t_new, from the
     * last completed step's state: the prescribed displacements set, the
     * Newton loop run (in one graph launch where the backend can).
     */
    StepReport
    attempt_step(const double t_new, const StepLoads &loads);
    /// The regions of the prescribed displacements and rollers: refuses
    /// one that holds no DoF, makes the time functions, the trace's
    /// regions and its first row. Collective.
    void
    setup_component_conditions();
    /**
     * Sets the prescribed components of the state @p u, @p p (owned
     * entries) for the step from the current time to @p t_new: quasi-
     * static, u at t_new (the predictor u = u_k takes it); dynamic, p such
     * that the predictor u_k + dt p / m reaches the value at t_new.
     */
    void
    set_prescribed_values(const double         t_new,
                          std::vector<double> &u,
                          std::vector<double> &p) const;
    /// The value of the prescribed displacement @p k at @p t; refuses one
    /// that is not finite, naming its entry.
    double
    prescribed_value(const unsigned int k, const double t) const;
    /**
     * Quasi-static with rollers or prescribed displacements: refuses held
     * DoFs that leave a rigid motion free (the tangent would be singular).
     * A rigid motion a + w x X moves a held DoF (node X, component c) by
     * its component c; the held DoFs stop every one where the Gram matrix
     * of these linear functionals of (a, w) is regular. Collective.
     */
    void
    check_rigid_motions() const;
    /// region_forces() at the displacement @p u (owned entries).
    std::vector<RegionForce>
    region_forces(const std::vector<double> &u) const;
    /// Adds a row to the force trace at the state @p u. Collective.
    void
    record_trace(const std::vector<double> &u);
    /// trace.csv, trace.png and the force/displacement curve, where the
    /// trace is on.
    void
    write_trace() const;
    /// state(), timed as a transfer.
    std::pair<std::vector<double>, std::vector<double>>
    transfer_state();

    double
    kinetic_energy(const std::vector<double> &p) const;
    double
    strain_energy(const std::vector<double> &u) const;
    Tensor<1, dim>
    linear_momentum(const std::vector<double> &p) const;
    Tensor<1, dim>
    load_region_displacement(const std::vector<double> &u) const;

    /// Position of @p dof among the owned entries.
    std::size_t
    owned_index(const types::global_dof_index dof) const
    {
      return owned_dofs.index_within_set(dof);
    }
    /// Whether @p dof is held fixed (constrained without a line).
    bool
    is_held(const types::global_dof_index dof) const;
    /// The sum of @p value over the ranks (the value on one process).
    template <typename T>
    T
    global_sum(const T &value) const;
    /// The first non-empty @p local_error of any rank, thrown on every
    /// rank.
    void
    throw_if_any_rank(const std::string &local_error) const;

    const Parameters parameters;
    /// MPI_COMM_SELF on one process.
    const MPI_Comm     communicator;
    const bool         distributed;
    ConditionalOStream pcout;
    TimerOutput        timer;
    /// TimerOutput section of the steps run whole on the device.
    static constexpr const char *step_graph_section = "Step (one device graph)";

    std::unique_ptr<Triangulation<dim>> triangulation;
    std::unique_ptr<FESystem<dim>>      fe;
    std::unique_ptr<Mapping<dim>>       mapping;
    std::unique_ptr<Quadrature<dim>>    quadrature;
    Quadrature<dim>                     mass_quadrature;
    DoFHandler<dim>                     dof_handler;
    IndexSet                            owned_dofs;
    IndexSet                            relevant_dofs;
    AffineConstraints<double>           constraints;
    /// The adapter: all cells on one process, the owned ones on a
    /// communicator.
    GPUAssembly::DoFHandlerAdapter<dim> adapter;

    /**
     * The shape functions' gradients and JxW at every quadrature point of
     * every cell, as FEValues gives them, for the state summary and the
     * writer's cell fields on one process: the mesh does not change during
     * a run, so the FEValues pass runs once (at the first output) instead
     * of at every output, and each output only sums the gradients of its
     * displacement in FEValues' order. Not built on several ranks, nor
     * where it would take more than cell_gradient_cache_limit bytes.
     */
    struct CellGradientCache
    {
      std::vector<typename DoFHandler<dim>::active_cell_iterator> cells;
      /// The vector component of each of a cell's shape functions.
      std::vector<unsigned int> components;
      /// Cell k's DoFs at k * dofs_per_cell.
      std::vector<types::global_dof_index> dofs;
      /// Shape function i of cell k at point q at
      /// (k * dofs_per_cell + i) * n_q_points + q.
      std::vector<Tensor<1, dim>> gradients;
      /// Cell k's JxW at k * n_q_points.
      std::vector<double> JxW;

      /// The gradients of @p u at cell @p k's points into @p grad_u (one
      /// per point), summed as FEValuesViews::Vector::
      /// get_function_gradients() sums them: the shape functions in
      /// order, those of zero value skipped.
      void
      gradients_of(const Vector<double>        &u,
                   const std::size_t            k,
                   std::vector<Tensor<2, dim>> &grad_u) const;
    };
    static constexpr std::size_t cell_gradient_cache_limit = 256 << 20;
    mutable std::once_flag       cell_gradient_cache_built;
    mutable std::unique_ptr<CellGradientCache> cell_gradient_cache;

    /// Largest distance between two vertices of the (coarse) mesh.
    double                          diameter = 0;
    std::vector<types::boundary_id> mesh_boundary_ids;
    std::vector<OwnedNode>          owned_nodes;
    /// Positions in owned_nodes of the nodes of the load region, and
    /// their number over all ranks.
    std::vector<unsigned int> loaded_nodes;
    unsigned int              n_loaded_nodes = 0;

    BackendData backend_data;
    /// Why the linear solver runs ('Solver/Linear solver', or auto's
    /// reason), for the log.
    std::string                            linear_solver_reason;
    std::unique_ptr<IntegratorBackend>     backend;
    std::unique_ptr<Function<1>>           load_function;
    std::unique_ptr<SurfaceLoadAmplitudes> surface_amplitudes;

    /// The DoFs the prescribed displacements and the rollers hold.
    ComponentConstraintDoFs component_dofs;
    /// The time function of each prescribed displacement, and the
    /// positions of its DoFs among the owned entries.
    std::vector<std::unique_ptr<Function<1>>> prescribed_functions;
    std::vector<std::vector<std::size_t>>     prescribed_owned;
    /// A region of region_forces(): the DoFs whose reaction it sums
    /// (locally relevant; none for the load region) and its owned nodes.
    struct ForceRegion
    {
      std::string                          name;
      std::vector<types::global_dof_index> dofs;
      std::vector<unsigned int>            nodes;
      unsigned int                         n_nodes = 0;
      bool                                 is_load = false;
    };
    std::vector<ForceRegion> force_regions;
    /// The locally owned cells with a DoF (or a constraint master) in a
    /// force region, in active-cell order: the reactions visit only these,
    /// so that the trace costs a boundary layer per step, not the mesh.
    std::vector<typename DoFHandler<dim>::active_cell_iterator> force_cells;
    /// The force regions of each DoF of force_regions, in increasing order.
    std::unordered_map<types::global_dof_index, std::vector<unsigned int>>
      regions_of;
    /// The held DoFs of the owned nodes, in the order of the owned nodes
    /// and their components, each with a region it belongs to: where a
    /// nodal load on a held DoF enters the reactions.
    struct HeldNodeDoF
    {
      types::global_dof_index dof;
      unsigned int            component;
      unsigned int            region;
    };
    std::vector<HeldNodeDoF> held_node_dofs;
    /// Whether the force trace is recorded, and its rows: step, time,
    /// then per region force and mean displacement.
    bool                             force_trace = false;
    std::vector<std::vector<double>> trace_rows;
    /// The region and the component of the force/displacement curve
    /// (numbers::invalid_unsigned_int: none); the load region's curve
    /// projects on the load's direction.
    unsigned int curve_region    = numbers::invalid_unsigned_int;
    unsigned int curve_component = 0;
    /// The loads of the last completed step (the reactions subtract them).
    StepLoads last_loads;
    /// Quasi-static: the current load step, cut below 'Time step' after a
    /// step that did not converge.
    double       step_size = 0;
    unsigned int step_cuts = 0;

    double                                      time        = 0;
    unsigned int                                step_number = 0;
    bool                                        dynamic     = true;
    RunStatistics                               stats;
    std::vector<std::pair<double, std::string>> pvd_records;
    /// The VTU series on one process (start_output_writers()).
    std::unique_ptr<AppUtilities::SnapshotWriter<dim>> snapshot_writer;
    /// Its boundary files, prepared on a thread of their own.
    std::shared_future<std::shared_ptr<const BoundarySeries>> boundary_series;
  };
} // namespace Hyperelastic

#endif
