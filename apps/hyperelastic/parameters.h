// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_parameters_h
#define hyperelastic_parameters_h

#include <deal.II/base/data_out_base.h>
#include <deal.II/base/parameter_handler.h>
#include <deal.II/base/point.h>

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

      static void
      declare_parameters(ParameterHandler &prm);
      void
      parse_parameters(ParameterHandler &prm);
    } boundary;

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
      /// auto, direct, cg-jacobi, cg-chebyshev or cg-block-jacobi; set-up
      /// resolves auto for the backend (ImplicitSolid::linear_solver()).
      std::string  linear_solver;
      unsigned int chebyshev_degree;
      double       chebyshev_smoothing_range;

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
      /// zlib level of the VTU files' data arrays.
      DataOutBase::VtkFlags::ZlibCompressionLevel compression;

      static void
      declare_parameters(ParameterHandler &prm);
      void
      parse_parameters(ParameterHandler &prm);
    } output;

    /// The explicit (TLED) integrator's entries.
    ExplicitDynamics explicit_dynamics;

    static void
    declare_parameters(ParameterHandler &prm);
    void
    parse_parameters(ParameterHandler &prm);
  };
} // namespace Hyperelastic

#endif
