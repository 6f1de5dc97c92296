// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_distributed_solid_h
#define hyperelastic_distributed_solid_h

#include <deal.II/base/conditional_ostream.h>
#include <deal.II/base/function.h>
#include <deal.II/base/index_set.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/point.h>
#include <deal.II/base/quadrature.h>
#include <deal.II/base/tensor.h>
#include <deal.II/base/timer.h>

#include <deal.II/distributed/tria_base.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping.h>

#include <deal.II/lac/affine_constraints.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>

#include <array>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "distributed_backend.h"
#include "hyperelastic_solid.h"
#include "parameters.h"

namespace Hyperelastic
{
  /**
   * HyperelasticSolid's implicit midpoint rule on the ranks of an MPI
   * communicator: the built-in hexahedral bar on a
   * parallel::distributed::Triangulation (p4est; 'Local refinement steps'
   * with hanging nodes), tetrahedral meshes on a
   * parallel::fullydistributed::Triangulation made from the serial mesh
   * (METIS partition). Each rank assembles its cells with the plugin's
   * DistributedAssembler, on its GPU or on the host, and the linear algebra
   * of a Newton iteration runs behind DistributedIntegratorBackend: the
   * resident backend (on the GPU by default) or Trilinos ('Execution/
   * Distributed linear algebra'). The Newton loop, the loads, the input checks
   * and the failure messages are HyperelasticSolid's (solid_common.h); screen
   * output comes from the first rank, files are one .vtu per rank with a
   * .pvtu record per output and the .pvd series.
   *
   * On a communicator of one rank it solves the same discrete problem as
   * HyperelasticSolid, to the solver's tolerances (the app itself runs
   * HyperelasticSolid on one process).
   */
  class DistributedSolid
  {
  public:
    static constexpr int dim = 3;

    /// Collective over @p communicator from here on.
    DistributedSolid(const Parameters &parameters,
                     const MPI_Comm    communicator,
                     std::ostream     &out = std::cout);

    ~DistributedSolid();

    /// Set up and run the whole simulation, with output and a summary.
    void
    run();

    /// Mesh, DoFs, constraints, adapter, backend and initial state.
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
    double
    kinetic_energy() const;
    double
    strain_energy() const;
    Tensor<1, dim>
    linear_momentum() const;
    /// Mean displacement of the nodes of the load region (zero if none).
    Tensor<1, dim>
    load_region_displacement() const;

    const RunStatistics &
    statistics() const
    {
      return stats;
    }

    types::global_dof_index
    n_dofs() const;

    /// Where the steps run (one line).
    std::string
    backend_description() const;

  private:
    /// An owned node: its position and its DoFs, one per component.
    struct OwnedNode
    {
      Point<dim>                               position;
      std::array<types::global_dof_index, dim> dofs;
    };

    void
    make_grid();
    void
    refine_near_clamp_and_load();
    void
    setup_system();
    void
    check_constraints(const bool has_load) const;
    void
    setup_backend();
    void
    set_initial_state();
    void
    write_output();
    /// Time per step of each stage of the Newton loop and of the
    /// exchanges, on rank 0's stream. Collective.
    void
    print_stage_split() const;
    /// The smallest J over all ranks' quadrature points for displacement
    /// @p u (ghosted) and where it is. Collective.
    std::pair<double, std::string>
    find_worst_element(const DistributedVector &u_ghosted) const;
    [[noreturn]] void
    stop(const std::string &reason);
    /// @p owned with its locally relevant entries.
    DistributedVector
    ghosted_copy(const DistributedVector &owned) const;
    /// Whether @p dof is held fixed (constrained without a line).
    bool
    is_held(const types::global_dof_index dof) const;

    const Parameters   parameters;
    const MPI_Comm     communicator;
    ConditionalOStream pcout;
    TimerOutput        timer;

    std::unique_ptr<parallel::DistributedTriangulationBase<dim>> triangulation;
    std::unique_ptr<FESystem<dim>>                               fe;
    std::unique_ptr<Mapping<dim>>                                mapping;
    std::unique_ptr<Quadrature<dim>>                             quadrature;
    Quadrature<dim>                     mass_quadrature;
    DoFHandler<dim>                     dof_handler;
    IndexSet                            owned_dofs;
    IndexSet                            relevant_dofs;
    AffineConstraints<double>           constraints;
    GPUAssembly::DoFHandlerAdapter<dim> adapter;

    /// Largest distance between two vertices of the (coarse) mesh.
    double                          diameter = 0;
    std::vector<types::boundary_id> mesh_boundary_ids;
    std::vector<OwnedNode>          owned_nodes;
    /// Positions in owned_nodes of the nodes of the load region.
    std::vector<unsigned int> loaded_nodes;
    unsigned int              n_loaded_nodes = 0;

    DistributedBackendData                        backend_data;
    std::unique_ptr<DistributedIntegratorBackend> backend;
    std::unique_ptr<Function<1>>                  load_function;

    double                                      time        = 0;
    unsigned int                                step_number = 0;
    bool                                        dynamic     = true;
    RunStatistics                               stats;
    std::vector<std::pair<double, std::string>> pvd_records;
  };
} // namespace Hyperelastic

#endif
