// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_parameters_h
#define hyperelastic_parameters_h

#include <deal.II/base/data_out_base.h>
#include <deal.II/base/parameter_handler.h>
#include <deal.II/base/point.h>

#include <array>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "explicit_parameters.h"

namespace Hyperelastic
{
  using namespace dealii;

  /**
   * An axis-aligned box "x0, y0, z0, x1, y1, z1"; empty selects nothing.
   */
  struct Box
  {
    bool     empty = true;
    Point<3> lower, upper;
    bool
    contains(const Point<3> &p, const double tolerance) const;
    static Box
    parse(const std::string &text, const std::string &entry);
  };



  /**
   * Where a boundary condition acts: the boundary faces of one boundary id,
   * or the nodes inside a box.
   */
  struct BoundarySelection
  {
    bool         by_box      = false;
    unsigned int boundary_id = 0;
    Box          box;
    /// As written in the entry, for messages ("3" or "0, 0, 0, 1, 1, 0").
    std::string text;
  };

  /// Components of the displacement held at zero on a selection.
  struct RollerCondition
  {
    BoundarySelection   where;
    std::array<bool, 3> components = {{false, false, false}};
    /// The parameter entry it comes from, for messages.
    std::string entry;
  };

  /// One component of the displacement set by a function of time.
  struct PrescribedDisplacement
  {
    BoundarySelection where;
    unsigned int      component = 0;
    /// muparser expression of t.
    std::string expression;
    std::string entry;
  };



  /**
   * All run-time parameters, one struct per subsection as in deal.II's
   * step-44, with units and bounds in the declarations.
   */
  struct Parameters
  {
    struct Geometry
    {
      std::string               mesh_file;
      std::vector<double>       size;
      std::vector<unsigned int> subdivisions;
      std::string               cell_type;
      double                    scale;
      unsigned int              local_refinement_steps;

      static void
      declare_parameters(ParameterHandler &prm);
      void
      parse_parameters(ParameterHandler &prm);
    } geometry;

    struct Material
    {
      double              mu;
      double              lambda;
      double              density;
      std::vector<double> body_force;

      static void
      declare_parameters(ParameterHandler &prm);
      void
      parse_parameters(ParameterHandler &prm);
    } material;

    struct Boundary
    {
      std::vector<unsigned int> fixed_boundary_ids;
      Box                       fixed_region;
      Box                       load_region;
      std::vector<double>       load;
      std::string               load_time_function;
      /// 'Rollers' and 'Roller regions', in this order.
      std::vector<RollerCondition> rollers;
      /// 'Prescribed displacements' and 'Prescribed displacement regions'.
      std::vector<PrescribedDisplacement> prescribed;

      /// Whether rollers or prescribed displacements are set.
      bool
      has_component_conditions() const
      {
        return !rollers.empty() || !prescribed.empty();
      }

      static void
      declare_parameters(ParameterHandler &prm);
      void
      parse_parameters(ParameterHandler &prm);
    } boundary;

    /**
     * Surface loads on boundary faces: a dead traction (force per reference
     * area, integrated on the reference configuration) and a follower
     * pressure (on the current surface), each on the faces of its boundary
     * ids and of its region, each with its own time function.
     */
    struct SurfaceLoads
    {
      std::vector<unsigned int> traction_boundary_ids;
      Box                       traction_region;
      std::vector<double>       traction;
      std::string               traction_time_function;
      std::vector<unsigned int> pressure_boundary_ids;
      Box                       pressure_region;
      double                    pressure;
      std::string               pressure_time_function;

      /// Whether the entries select faces for a traction or a pressure.
      bool
      has_traction() const
      {
        return !traction_boundary_ids.empty() || !traction_region.empty;
      }
      bool
      has_pressure() const
      {
        return !pressure_boundary_ids.empty() || !pressure_region.empty;
      }

      static void
      declare_parameters(ParameterHandler &prm);
      void
      parse_parameters(ParameterHandler &prm);
    } surface_loads;

    struct InitialConditions
    {
      std::string displacement;
      std::string velocity;

      static void
      declare_parameters(ParameterHandler &prm);
      void
      parse_parameters(ParameterHandler &prm);
    } initial;

    struct Time
    {
      std::string  mode;
      double       end_time;
      double       time_step;
      unsigned int max_steps;

      static void
      declare_parameters(ParameterHandler &prm);
      void
      parse_parameters(ParameterHandler &prm);
    } time;

    struct Solver
    {
      double       newton_tolerance;
      unsigned int max_newton_iterations;
      double       divergence_limit;
      double       cg_tolerance;
      unsigned int max_cg_iterations;
      /// auto, direct, cg-jacobi, cg-chebyshev, cg-block-jacobi or
      /// bicgstab-jacobi; set-up
      /// resolves auto for the backend (ImplicitSolid::linear_solver()).
      std::string  linear_solver;
      unsigned int chebyshev_degree;
      double       chebyshev_smoothing_range;
      /// Quasi-static: halvings of a step that does not converge before
      /// the run stops.
      unsigned int max_step_cuts;

      static void
      declare_parameters(ParameterHandler &prm);
      void
      parse_parameters(ParameterHandler &prm);
    } solver;

    struct Execution
    {
      std::string device;
      std::string assembly_method;
      std::string precision;
      bool        symmetric_element_data;
      bool        compressed_supplemental_data;
      bool        step_graph;
      /// auto, resident or trilinos (the backend on a communicator).
      std::string distributed_linear_algebra;
      /// auto, host, nccl or cuda-aware-mpi (the resident backend's
      /// GPUAssembly::HaloPath).
      std::string exchange_path;
      /// The MPI path of ImplicitSolid also on one MPI process.
      bool distributed_on_one_process;

      static void
      declare_parameters(ParameterHandler &prm);
      void
      parse_parameters(ParameterHandler &prm);
    } execution;

    struct Output
    {
      std::string  directory;
      std::string  base_name;
      unsigned int output_interval;
      unsigned int screen_interval;
      /// auto, true or false: the reactions and the force/displacement
      /// curve in trace.csv and trace.png (auto: with rollers or
      /// prescribed displacements).
      std::string force_trace;
      /// zlib level of the VTU files' data arrays.
      DataOutBase::VtkFlags::ZlibCompressionLevel compression;

      static void
      declare_parameters(ParameterHandler &prm);
      void
      parse_parameters(ParameterHandler &prm);
    } output;

    /// The explicit (TLED) integrator's entries.
    ExplicitDynamics explicit_dynamics;

    /// The entries the parameter file sets to other values than their
    /// defaults (AppUtilities::changed_entries()).
    std::set<std::string> changed_entries;

    static void
    declare_parameters(ParameterHandler &prm);
    /// Read and check the values; entries that the integrator, the device
    /// or the mesh chosen would not use are refused (check_entries_used()).
    void
    parse_parameters(ParameterHandler &prm);

    /// Refuse entries set to values the run would not use, naming the entry
    /// and why.
    void
    check_entries_used(const ParameterHandler &prm) const;

    /// Refuses the entries that shape the GPU path, for the reason @p why.
    void
    refuse_gpu_path_entries(const ParameterHandler &prm,
                            const std::string      &why) const;
    /// The intervals against the run's @p n_steps steps: one that would do
    /// what 0 does is refused where set; otherwise a note on @p log.
    void
    check_intervals(const unsigned int n_steps, std::ostream &log) const;

    /**
     * Refuses the entries of the GPU path that a run with 'Device' = auto
     * would not use where @p cuda_device_found is false (the run is then on
     * the host). The app calls it after parse_parameters(); the check of
     * 'Device' = host is part of parsing.
     */
    void
    check_device_entries(const ParameterHandler &prm,
                         const bool              cuda_device_found) const;
  };
} // namespace Hyperelastic

#endif
