// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef wave2d_parameters_h
#define wave2d_parameters_h

#include <deal.II/base/data_out_base.h>
#include <deal.II/base/parameter_handler.h>

#include <array>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace Wave2D
{
  /**
   * Everything the parameter file sets, one struct per subsection, each
   * with declare_parameters() and parse_parameters() (deal.II step-44's
   * pattern). Values are checked when parsed: a bad file stops the program
   * with a message that names the entry.
   */
  struct Parameters
  {
    struct Mesh
    {
      std::string mesh_file;
      std::string cell_type;
      double      width, height, element_size;
      std::string defect;
      double      hole_x, hole_y, hole_radius;
      void
      declare(dealii::ParameterHandler &prm);
      void
      parse(dealii::ParameterHandler &prm);
    } mesh;

    struct Material
    {
      /// Element set name or material id, as written in the file.
      std::string key;
      double      youngs_modulus, poissons_ratio, density, damping;
    };
    std::vector<Material> materials;

    struct Absorbing
    {
      std::vector<std::string> sides;
      double                   thickness, max_damping;
      void
      declare(dealii::ParameterHandler &prm);
      void
      parse(dealii::ParameterHandler &prm);
    } absorbing;

    struct Source
    {
      std::string           type;
      std::array<double, 4> region;
      std::array<double, 2> direction;
      double                amplitude;
      std::string           signal;
      double                frequency, cycles, delay, width;
      std::vector<double>   fixed_region; // empty or 4 values
      void
      declare(dealii::ParameterHandler &prm);
      void
      parse(dealii::ParameterHandler &prm);
    } source;

    struct Receivers
    {
      std::vector<std::array<double, 2>> points;
      unsigned int                       record_interval;
      void
      declare(dealii::ParameterHandler &prm);
      void
      parse(dealii::ParameterHandler &prm);
    } receivers;

    struct Time
    {
      double end_time, time_step, courant_number;
      void
      declare(dealii::ParameterHandler &prm);
      void
      parse(dealii::ParameterHandler &prm);
    } time;

    struct Solver
    {
      std::string  device, precision, partitioner;
      unsigned int nodes_per_block;
      void
      declare(dealii::ParameterHandler &prm);
      void
      parse(dealii::ParameterHandler &prm);
    } solver;

    struct Output
    {
      std::string  directory;
      unsigned int snapshot_interval;
      bool         snapshot_images;
      double       progress_interval;
      /// zlib level of the snapshots' data arrays.
      dealii::DataOutBase::VtkFlags::ZlibCompressionLevel compression;
      void
      declare(dealii::ParameterHandler &prm);
      void
      parse(dealii::ParameterHandler &prm);
    } output;

    struct Checkpoint
    {
      unsigned int interval;
      bool         restart;
      unsigned int stop_after;
      void
      declare(dealii::ParameterHandler &prm);
      void
      parse(dealii::ParameterHandler &prm);
    } checkpoint;

    /// The entries the parameter file sets to other values than their
    /// defaults (AppUtilities::changed_entries()).
    std::set<std::string> changed_entries;

    static void
    declare_parameters(dealii::ParameterHandler &prm);

    /// Read and check the values; entries that the run they describe would
    /// not use are refused (check_entries_used()).
    void
    parse_parameters(dealii::ParameterHandler &prm);

    /// Refuse entries set to values the run would not use, naming the entry
    /// and why; the intervals against the run's @p n_steps steps (known once
    /// the mesh gives the time step): one that would do what 0 does is
    /// refused where set, a note on @p log at its default.
    void
    check_entries_used(const dealii::ParameterHandler &prm) const;
    void
    check_intervals(const unsigned int n_steps, std::ostream &log) const;
  };
} // namespace Wave2D

#endif
