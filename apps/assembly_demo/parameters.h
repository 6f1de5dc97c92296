// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef assembly_demo_parameters_h
#define assembly_demo_parameters_h

#include <deal.II/base/parameter_handler.h>
#include <deal.II/base/patterns.h>

#include <set>
#include <string>

#include "../common/app_utilities.h"
#include "../common/linear_solver_names.h"

namespace AssemblyDemo
{
  using namespace dealii;

  /**
   * The demo's parameter file: declarations with bounds and documentation,
   * and the parsed values, checked when parsed.
   */
  struct Parameters
  {
    std::string  mesh_file;
    std::string  clamped_region;
    double       length;
    unsigned int subdivisions;
    std::string  cell_type;
    unsigned int degree;
    double       youngs_modulus;
    double       poisson_ratio;
    double       density;
    double       gravity;
    std::string  output_directory;
    /// zlib level of the VTU file's data arrays.
    DataOutBase::VtkFlags::ZlibCompressionLevel compression;
    std::string                                 assembly_method;
    std::string                                 linear_solver;

    /// The values of 'Linear solver': auto, the device solvers, host-cg.
    static std::string
    linear_solver_names()
    {
      std::string names = "auto";
      for (const std::string &name : AppSolvers::device_solver_names())
        names += "|" + name;
      return names + "|host-cg";
    }

    static std::string
    linear_solver_documentation()
    {
      std::string text =
        "How the system is solved. auto: " + AppSolvers::describe("auto") +
        "; the host CG where no device solver can run (no GPU).";
      for (const std::string &name : AppSolvers::device_solver_names())
        text += " " + name + ": " + AppSolvers::describe(name) + ".";
      return text +
             " host-cg: conjugate gradients with SSOR on one host core, the "
             "matrix copied back from the GPU. The device solvers need a "
             "GPU; the solution comes back for the output.";
    }

    static void
    declare_parameters(ParameterHandler &prm)
    {
      prm.enter_subsection("Mesh");
      prm.declare_entry("Mesh file",
                        "",
                        Patterns::FileName(),
                        "A 3D mesh (.msh, .inp, .vtk or .dat). Empty: a "
                        "built-in beam [0, L] x [0, 1] x [0, 1]. The faces "
                        "at x = min are clamped either way, unless 'Clamped "
                        "region' says otherwise.");
      prm.declare_entry("Clamped region",
                        "",
                        Patterns::Anything(),
                        "Box x0, y0, z0, x1, y1, z1: the boundary faces whose "
                        "vertices all lie in it are clamped. Empty: the "
                        "faces at the smallest x of the mesh.");
      prm.declare_entry("Beam length",
                        "4",
                        Patterns::Double(0.),
                        "L of the built-in beam. Units: m.");
      prm.declare_entry("Subdivisions",
                        "8",
                        Patterns::Integer(1, 512),
                        "Cells across the built-in beam's width (its length "
                        "gets L times as many).");
      prm.declare_entry("Cell type",
                        "tetrahedra",
                        Patterns::Selection("tetrahedra|hexahedra"),
                        "Cells of the built-in beam.");
      prm.leave_subsection();

      prm.enter_subsection("Discretization");
      prm.declare_entry("Degree",
                        "1",
                        Patterns::Integer(1, 2),
                        "Polynomial degree of the displacement.");
      prm.leave_subsection();

      prm.enter_subsection("Material");
      prm.declare_entry("Young's modulus",
                        "1e4",
                        Patterns::Double(0.),
                        "E. Units: Pa.");
      prm.declare_entry("Poisson's ratio",
                        "0.3",
                        Patterns::Double(0., 0.5),
                        "nu (dimensionless, below 0.5).");
      prm.declare_entry("Density",
                        "1",
                        Patterns::Double(0.),
                        "rho. Units: kg/m^3.");
      prm.declare_entry("Gravity",
                        "9.81",
                        Patterns::Double(),
                        "Acceleration along -z. Units: m/s^2.");
      prm.leave_subsection();

      prm.declare_entry("Assembly method",
                        "auto",
                        Patterns::Selection("auto|host|GlobalNZ|SharedNZ|"
                                            "LocalElem-atomic|"
                                            "LocalElem-colored"),
                        "Where the matrix is assembled. auto: GlobalNZ on "
                        "the GPU if there is one, else the host path.");
      prm.declare_entry("Linear solver",
                        "auto",
                        Patterns::Selection(linear_solver_names()),
                        linear_solver_documentation());
      prm.declare_entry("Output directory",
                        "output",
                        Patterns::DirectoryName(),
                        "Where the VTU and PVD files go (created if "
                        "missing).");
      AppUtilities::declare_compression_entry(prm, "best speed");
    }

    void
    parse_parameters(ParameterHandler &prm)
    {
      prm.enter_subsection("Mesh");
      mesh_file      = prm.get("Mesh file");
      clamped_region = prm.get("Clamped region");
      length         = prm.get_double("Beam length");
      subdivisions   = prm.get_integer("Subdivisions");
      cell_type      = prm.get("Cell type");
      prm.leave_subsection();
      prm.enter_subsection("Discretization");
      degree = prm.get_integer("Degree");
      prm.leave_subsection();
      prm.enter_subsection("Material");
      youngs_modulus = prm.get_double("Young's modulus");
      poisson_ratio  = prm.get_double("Poisson's ratio");
      density        = prm.get_double("Density");
      gravity        = prm.get_double("Gravity");
      prm.leave_subsection();
      output_directory = prm.get("Output directory");
      compression      = AppUtilities::parse_compression_entry(prm);
      assembly_method  = prm.get("Assembly method");
      linear_solver    = prm.get("Linear solver");
      AssertThrow(poisson_ratio < 0.5,
                  ExcMessage("Poisson's ratio must be below 0.5."));
      AssertThrow(length > 0 && youngs_modulus > 0,
                  ExcMessage("Beam length and Young's modulus must be "
                             "positive."));
      // Entries set to values the run would not use are refused.
      if (!mesh_file.empty())
        AppUtilities::refuse_unused(
          AppUtilities::changed_entries(prm, declare_parameters),
          prm,
          {"Mesh/Beam length", "Mesh/Subdivisions", "Mesh/Cell type"},
          "it describes the built-in beam, and 'Mesh/Mesh file' = '" +
            mesh_file +
            "' is read instead. Remove the entry, or the mesh file.");
    }
  };
} // namespace AssemblyDemo

#endif
