// SPDX-License-Identifier: LGPL-2.1-or-later
#include "simulation.h"

#include <deal.II/base/multithread_info.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_tools.h>
#include <deal.II/grid/manifold_lib.h>

#include <deal.II/numerics/data_out.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/grid/mesh_input.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <limits>
#include <memory>
#include <set>
#include <sstream>

#include "../common/app_utilities.h"
#include "checkpoint.h"
#include "png_image.h"

namespace Wave2D
{
  using namespace dealii;
  using namespace GPUAssembly::Wave;

  namespace
  {
    // Peak memory of a run per mesh node (the triangulation, the DoF
    // handler, the nodal system, the partition, the plan and the output):
    // 3.6 kB, the growth of the host path's peak from 0.05 M to 0.21 M
    // nodes of the built-in plate, rounded up. The check before building
    // the plate multiplies it.
    constexpr double bytes_per_node = 4000;
  } // namespace

  Simulation::Simulation(const Parameters &parameters)
    : parameters(parameters)
    , pcout(std::cout)
    , timer(pcout, TimerOutput::summary, TimerOutput::wall_times)
    , started(std::chrono::steady_clock::now())
  {}



  void
  Simulation::make_grid()
  {
    TimerOutput::Scope      scope(timer, "Mesh");
    const Parameters::Mesh &p = parameters.mesh;
    if (!p.mesh_file.empty())
      {
        const std::string extension =
          std::filesystem::path(p.mesh_file).extension().string();
        GPUAssembly::MeshFileSummary summary;
        if (extension == ".inp")
          element_sets = GPUAssembly::read_abaqus(p.mesh_file, tria, &summary);
        else
          summary = GPUAssembly::read_mesh(p.mesh_file, tria);
        if (summary.n_unused_nodes > 0)
          pcout << "Mesh " << p.mesh_file << ": " << summary.describe()
                << std::endl;
        pcout << "Mesh " << p.mesh_file << ": " << tria.n_active_cells()
              << " cells";
        for (const auto &[name, id] : element_sets)
          pcout << (id == 1 ? "; element sets: " : ", ") << name << " -> "
                << int(id);
        pcout << std::endl;
        return;
      }

    // The built-in plate: coarse cells of about the hole's size, the 2 x 2
    // cells around the hole replaced by deal.II's square with a cylindrical
    // hole, then refined to the element size. Triangles come from splitting
    // each quadrilateral into 8 (node spacing half the quadrilateral size).
    const bool   triangles = p.cell_type == "triangles";
    const double target    = triangles ? 2 * p.element_size : p.element_size;
    {
      // The node spacing the refinement below reaches, to refuse a plate
      // that cannot fit before deal.II allocates it.
      double spacing = target;
      if (p.defect == "hole")
        spacing =
          2 * p.hole_radius /
          std::pow(2.,
                   std::max(0.,
                            std::ceil(std::log2(3 * p.hole_radius / target))));
      if (triangles)
        spacing /= 2;
      const double n_nodes = (p.width / spacing + 1) * (p.height / spacing + 1);
      AppUtilities::check_memory_estimate(
        n_nodes * bytes_per_node,
        "The built-in plate with 'Mesh/Element size' = " +
          AppUtilities::significant(p.element_size) + " m (about " +
          AppUtilities::significant(n_nodes, 3) + " nodes)",
        "Choose a larger 'Mesh/Element size' or a smaller plate.");
    }
    Triangulation<2> quads;
    if (p.defect == "hole")
      {
        const double a = 2 * p.hole_radius;
        const auto   steps =
          [a](const double from, const double hole, const double to) {
            std::vector<double> s;
            const unsigned int  n_before =
              std::max(1., std::round((hole - a - from) / a));
            for (unsigned int i = 0; i < n_before; ++i)
              s.push_back((hole - a - from) / n_before);
            s.push_back(a);
            s.push_back(a);
            const unsigned int n_after =
              std::max(1., std::round((to - hole - a) / a));
            for (unsigned int i = 0; i < n_after; ++i)
              s.push_back((to - hole - a) / n_after);
            return s;
          };
        const std::vector<std::vector<double>> step_sizes =
          {steps(0, p.hole_x, p.width), steps(0, p.hole_y, p.height)};
        Triangulation<2> full, outside, square;
        GridGenerator::subdivided_hyper_rectangle(full,
                                                  step_sizes,
                                                  Point<2>(0, 0),
                                                  Point<2>(p.width, p.height));
        std::set<Triangulation<2>::active_cell_iterator> remove;
        for (const auto &cell : full.active_cell_iterators())
          if (std::abs(cell->center()[0] - p.hole_x) < a &&
              std::abs(cell->center()[1] - p.hole_y) < a)
            remove.insert(cell);
        GridGenerator::create_triangulation_with_removed_cells(full,
                                                               remove,
                                                               outside);
        GridGenerator::hyper_cube_with_cylindrical_hole(square,
                                                        p.hole_radius,
                                                        a);
        GridTools::shift(Point<2>(p.hole_x, p.hole_y), square);
        GridGenerator::merge_triangulations(outside, square, quads, 1e-9 * a);
        const Point<2> centre(p.hole_x, p.hole_y);
        quads.set_all_manifold_ids(numbers::flat_manifold_id);
        for (const auto &cell : quads.active_cell_iterators())
          if (std::abs(cell->center()[0] - p.hole_x) < a &&
              std::abs(cell->center()[1] - p.hole_y) < a)
            {
              cell->set_all_manifold_ids(1);
              for (const auto &face : cell->face_iterators())
                if (face->at_boundary() &&
                    face->center().distance(centre) < 1.5 * p.hole_radius)
                  face->set_manifold_id(0);
            }
        quads.set_manifold(0, SphericalManifold<2>(centre));
        TransfiniteInterpolationManifold<2> transfinite;
        transfinite.initialize(quads);
        quads.set_manifold(1, transfinite);
        const unsigned int n_refinements =
          std::max(0., std::ceil(std::log2(1.5 * a / target)));
        quads.refine_global(n_refinements);
      }
    else
      GridGenerator::subdivided_hyper_rectangle(
        quads,
        {static_cast<unsigned int>(std::ceil(p.width / target)),
         static_cast<unsigned int>(std::ceil(p.height / target))},
        Point<2>(0, 0),
        Point<2>(p.width, p.height));

    if (triangles)
      {
        Triangulation<2> flat;
        GridGenerator::flatten_triangulation(quads, flat);
        GridGenerator::convert_hypercube_to_simplex_mesh(flat, tria);
      }
    else
      {
        GridGenerator::flatten_triangulation(quads, tria);
      }
    for (const auto &cell : tria.active_cell_iterators())
      cell->set_material_id(0);
    pcout << "Built-in plate " << p.width << " m x " << p.height << " m"
          << (p.defect == "hole" ? " with a hole of radius " +
                                     std::to_string(p.hole_radius) + " m" :
                                   std::string())
          << ": " << tria.n_active_cells() << ' ' << p.cell_type << std::endl;
  }



  void
  Simulation::setup()
  {
    TimerOutput::Scope scope(timer, "Set-up (system, partition)");

    // Materials: keys are element-set names or material ids.
    std::map<types::material_id, unsigned int> material_index;
    for (unsigned int m = 0; m < parameters.materials.size(); ++m)
      {
        const Parameters::Material &entry = parameters.materials[m];
        types::material_id          id;
        if (element_sets.count(entry.key) > 0)
          id = element_sets.at(entry.key);
        else
          {
            std::size_t used  = 0;
            long        value = -1;
            try
              {
                value = std::stol(entry.key, &used);
              }
            catch (...)
              {}
            AssertThrow(used == entry.key.size() && value >= 0 &&
                          value < numbers::invalid_material_id,
                        ExcMessage("Materials: '" + entry.key +
                                   "' is neither a material id nor an "
                                   "element set of the mesh."));
            id = value;
          }
        AssertThrow(material_index.count(id) == 0,
                    ExcMessage("Materials: '" + entry.key + "' and '" +
                               parameters.materials[material_index[id]].key +
                               "' both name material id " + std::to_string(id) +
                               "; one of them would be lost."));
        material_index[id] = m;
        materials.push_back({entry.youngs_modulus,
                             entry.poissons_ratio,
                             entry.density,
                             entry.damping});
      }
    discretization.reinit(tria, material_index);
    {
      // A material that no cell has would be lost without a word (cells
      // without a material are refused by reinit() above).
      std::set<types::material_id> ids;
      for (const auto &cell : tria.active_cell_iterators())
        ids.insert(cell->material_id());
      for (const auto &[id, m] : material_index)
        if (ids.count(id) == 0)
          {
            std::string present;
            for (const types::material_id i : ids)
              present += (present.empty() ? "" : ", ") + std::to_string(i);
            AssertThrow(false,
                        ExcMessage("Materials: '" +
                                   parameters.materials[m].key +
                                   "' (material id " + std::to_string(id) +
                                   ") is not used: no cell of the mesh has "
                                   "it (its cells have material ids " +
                                   present +
                                   "). Remove the entry, or give "
                                   "the mesh's id."));
          }
    }
    mesh = discretization.get_mesh();
    // The writer's thread builds the files' geometry while the set-up
    // goes on (the partition, the plan, the upload).
    start_snapshot_writer();

    std::vector<AbsorbingLayer> layers;
    for (const std::string &side : parameters.absorbing.sides)
      layers.push_back({side == "left"   ? AbsorbingLayer::Side::left :
                        side == "right"  ? AbsorbingLayer::Side::right :
                        side == "bottom" ? AbsorbingLayer::Side::bottom :
                                           AbsorbingLayer::Side::top,
                        parameters.absorbing.thickness,
                        parameters.absorbing.max_damping});
    apply_absorbing_layers(layers, mesh);
    system = assemble_nodal_system(mesh, materials);
    {
      double lambda_max = std::numeric_limits<double>::quiet_NaN();
      try
        {
          lambda_max = system.estimate_max_eigenvalue();
        }
      catch (const std::exception &)
        {
          // The message below names the material entry instead.
        }
      stable_time_step = 2. / std::sqrt(lambda_max);
      if (!(std::isfinite(stable_time_step) && stable_time_step > 0))
        {
          // The fastest material sets lambda_max: it is the entry to check.
          unsigned int fastest = 0;
          for (unsigned int m = 1; m < materials.size(); ++m)
            if (!(materials[m].p_wave_speed() <=
                  materials[fastest].p_wave_speed()))
              fastest = m;
          const Parameters::Material &entry = parameters.materials[fastest];
          AssertThrow(
            false,
            ExcMessage(
              "The stability limit of this model cannot be "
              "computed: the largest eigenvalue of M^-1 K is " +
              AppUtilities::significant(lambda_max) +
              ", not a positive finite number. The entry "
              "'Materials/" +
              entry.key +
              "' (E = " + AppUtilities::significant(entry.youngs_modulus) +
              " Pa, rho = " + AppUtilities::significant(entry.density) +
              " kg/m^3) has the fastest waves, c_p = " +
              AppUtilities::significant(materials[fastest].p_wave_speed()) +
              " m/s, on a mesh whose shortest edge is " +
              AppUtilities::significant(mesh.minimum_edge_length()) +
              " m: check its Young's modulus and density."));
        }
    }
    time_step = parameters.time.time_step > 0 ?
                  parameters.time.time_step :
                  parameters.time.courant_number * stable_time_step;
    AssertThrow(time_step <= stable_time_step,
                ExcMessage("Time/Time step " +
                           AppUtilities::significant(time_step) +
                           " s exceeds the stability limit " +
                           AppUtilities::significant(stable_time_step) +
                           " s of this mesh: the run would blow up. Use a "
                           "smaller time step, or 0 for an automatic one."));
    {
      // Damping c slows a node's update by 1 + c dt / 2: far beyond 1 the
      // layer holds the mesh's edge still and reflects the waves it should
      // absorb (and its value overflows the float field of the snapshots).
      const double damping = parameters.absorbing.max_damping;
      // The source's angular frequency: the tone burst's 2 pi f, the
      // Gaussian's 2 / width (where its spectrum falls to 1/e).
      const bool        gaussian = parameters.source.signal == "gaussian";
      const double      omega    = gaussian ?
                                     2 / parameters.source.width :
                                     2 * numbers::PI * parameters.source.frequency;
      const std::string entry =
        gaussian ?
          "'Source/Width' = " +
            AppUtilities::significant(parameters.source.width) + " s" :
          "'Source/Frequency' = " +
            AppUtilities::significant(parameters.source.frequency) + " Hz";
      AssertThrow(
        parameters.absorbing.sides.empty() ||
          (std::isfinite(damping) && damping * time_step <= 1e3),
        ExcMessage(
          "'Absorbing layers/Maximum damping' = " +
          AppUtilities::significant(damping) + " 1/s times the time step " +
          AppUtilities::significant(time_step) + " s is " +
          AppUtilities::significant(damping * time_step) +
          ", more than 1000: the layer would hold the mesh's edge "
          "still and reflect the waves instead of absorbing them. "
          "About the source's angular frequency times 2 to 4 works (" +
          AppUtilities::significant(omega * 3) + " 1/s for " + entry + ")."));
    }
    {
      // Step numbers are unsigned int in the stepper and its loop (which
      // adds up to 1000 steps to one): counts beyond half their range are
      // refused rather than wrapped.
      const double steps =
        std::ceil(parameters.time.end_time / time_step - 1e-9);
      constexpr unsigned int max_steps =
        std::numeric_limits<unsigned int>::max() / 2;
      AssertThrow(steps <= max_steps,
                  ExcMessage(
                    "Time/End time = " +
                    AppUtilities::significant(parameters.time.end_time) +
                    " s needs " + AppUtilities::significant(steps) +
                    " steps of " + AppUtilities::significant(time_step) +
                    " s, more than the " + std::to_string(max_steps) +
                    " one run can count. Choose a shorter end "
                    "time."));
      n_steps = std::max(1., steps);
      parameters.check_intervals(n_steps, pcout.get_stream());
      // The source signal is tabulated per step and the receivers record
      // every 'Record interval' steps: both grow with the step count.
      const double bytes =
        8. * steps * (parameters.source.fixed_region.empty() ? 1 : 2) +
        2 * 8. * 2 * steps * parameters.receivers.points.size() /
          parameters.receivers.record_interval;
      AppUtilities::check_memory_estimate(
        bytes,
        "The " + AppUtilities::significant(steps) +
          " steps to 'Time/End time' = " +
          AppUtilities::significant(parameters.time.end_time) +
          " s (source signal and receiver records)",
        "Choose a shorter end time or a larger 'Receivers/Record "
        "interval'.");
    }

    // Sources.
    const Parameters::Source &s = parameters.source;
    Source                    source;
    source.type =
      s.type == "force" ? Source::Type::force : Source::Type::displacement;
    source.nodes =
      mesh.nodes_in_box(s.region[0], s.region[1], s.region[2], s.region[3]);
    if (source.nodes.empty())
      {
        const unsigned int n =
          mesh.nearest_node(0.5 * (s.region[0] + s.region[2]),
                            0.5 * (s.region[1] + s.region[3]));
        AssertThrow(false,
                    ExcMessage("Source/Region contains no node of the mesh; "
                               "the node nearest to its centre is at (" +
                               std::to_string(mesh.coordinates[2 * n]) + ", " +
                               std::to_string(mesh.coordinates[2 * n + 1]) +
                               ")."));
      }
    source.direction[0] = s.direction[0];
    source.direction[1] = s.direction[1];
    source.amplitude    = s.amplitude;
    source.signal.type  = s.signal == "hann" ? Signal::Type::hann_tone_burst :
                                               Signal::Type::gaussian;
    source.signal.frequency = s.frequency;
    source.signal.n_cycles  = s.cycles;
    source.signal.delay     = s.delay;
    source.signal.width     = s.width;
    sources                 = {source};
    if (!s.fixed_region.empty())
      {
        Source clamp;
        clamp.type      = Source::Type::displacement;
        clamp.amplitude = 0;
        clamp.nodes     = mesh.nodes_in_box(s.fixed_region[0],
                                        s.fixed_region[1],
                                        s.fixed_region[2],
                                        s.fixed_region[3]);
        AssertThrow(!clamp.nodes.empty(),
                    ExcMessage("Source/Fixed region contains no node of the "
                               "mesh."));
        sources.push_back(clamp);
      }
    AssertThrow(!parameters.receivers.points.empty(),
                ExcMessage("Receivers/Points: at least one receiver is "
                           "needed."));
    for (unsigned int k = 0; k < parameters.receivers.points.size(); ++k)
      {
        // A receiver records the node nearest to it; one outside the model
        // (or in a hole) would record somewhere else without saying so.
        const auto        &point = parameters.receivers.points[k];
        const unsigned int node  = mesh.nearest_node(point[0], point[1]);
        AssertThrow(
          inside_mesh(point[0], point[1]),
          ExcMessage(
            "Receivers/Points: receiver " + std::to_string(k) + " at (" +
            AppUtilities::significant(point[0]) + ", " +
            AppUtilities::significant(point[1]) +
            ") lies outside the model; the nearest node is at (" +
            AppUtilities::significant(mesh.coordinates[2 * node]) + ", " +
            AppUtilities::significant(mesh.coordinates[2 * node + 1]) + "), " +
            AppUtilities::significant(
              std::hypot(point[0] - mesh.coordinates[2 * node],
                         point[1] - mesh.coordinates[2 * node + 1])) +
            " m away. Give points inside the mesh."));
        receiver_nodes.push_back(node);
      }

    std::vector<unsigned int> offsets, neighbours;
    make_node_graph(system, offsets, neighbours);
    BlockLimits limits;
    limits.max_block_size = parameters.solver.nodes_per_block;
    limits.max_halo_nodes = parameters.solver.nodes_per_block;
    blocks =
      partition_nodes(parse_partitioner_type(parameters.solver.partitioner),
                      mesh,
                      offsets,
                      neighbours,
                      limits);

    const std::string &device = parameters.solver.device;
    use_gpu                   = device == "gpu" ||
              (device == "auto" && GPUAssembly::n_cuda_devices() > 0);
    AssertThrow(!use_gpu || GPUAssembly::n_cuda_devices() > 0,
                ExcMessage("Solver/Device = gpu, but no CUDA device was "
                           "found. Use auto or host."));

    pcout << "Nodes: " << mesh.n_nodes << ", unknowns: " << 2 * mesh.n_nodes
          << ", cells: " << mesh.n_cells() << ", shortest edge "
          << mesh.minimum_edge_length()
          << " m, links per node <= " << system.max_links() << std::endl;
    for (unsigned int m = 0; m < materials.size(); ++m)
      pcout << "Material " << parameters.materials[m].key
            << ": c_p = " << materials[m].p_wave_speed()
            << " m/s, c_s = " << materials[m].s_wave_speed()
            << " m/s, c_R = " << materials[m].rayleigh_wave_speed() << " m/s"
            << std::endl;
    pcout << "Time step " << time_step << " s (stability limit "
          << stable_time_step << " s), " << n_steps << " steps to "
          << n_steps * time_step << " s" << std::endl;
    pcout << "Source: " << s.type << " on " << source.nodes.size()
          << " nodes; receivers at nodes";
    for (const unsigned int n : receiver_nodes)
      pcout << " (" << mesh.coordinates[2 * n] << ", "
            << mesh.coordinates[2 * n + 1] << ")";
    pcout << "\nNode blocks (" << parameters.solver.partitioner
          << " partitioner): " << blocks.n_blocks() << " of "
          << limits.max_block_size
          << " nodes, efficiency eta = " << blocks.efficiency() << std::endl;
    pcout << (use_gpu ?
                GPUAssembly::describe_execution_path() :
                "Host path: " + std::to_string(MultithreadInfo::n_threads()) +
                  " threads.")
          << std::endl;
  }



  bool
  Simulation::inside_mesh(const double x, const double y) const
  {
    // Cells split into triangles as the images draw them (a fan from the
    // first node); a point on an edge, to rounding, is inside.
    const unsigned int nv = mesh.nodes_per_cell;
    const auto        &c  = mesh.coordinates;
    for (unsigned int cell = 0; cell < mesh.n_cells(); ++cell)
      for (unsigned int t = 0; t + 2 < nv; ++t)
        {
          const unsigned int a = mesh.cells[cell * nv],
                             b = mesh.cells[cell * nv + t + 1],
                             d = mesh.cells[cell * nv + t + 2];
          const double det =
            (c[2 * b] - c[2 * a]) * (c[2 * d + 1] - c[2 * a + 1]) -
            (c[2 * d] - c[2 * a]) * (c[2 * b + 1] - c[2 * a + 1]);
          if (det == 0)
            continue;
          const double l1 = ((x - c[2 * a]) * (c[2 * d + 1] - c[2 * a + 1]) -
                             (c[2 * d] - c[2 * a]) * (y - c[2 * a + 1])) /
                            det,
                       l2 = ((c[2 * b] - c[2 * a]) * (y - c[2 * a + 1]) -
                             (x - c[2 * a]) * (c[2 * b + 1] - c[2 * a + 1])) /
                            det;
          constexpr double tolerance = 1e-9;
          if (l1 >= -tolerance && l2 >= -tolerance && 1 - l1 - l2 >= -tolerance)
            return true;
        }
    return false;
  }



  std::uint64_t
  Simulation::fingerprint() const
  {
    // FNV-1a over what fixes the discrete model: a restart from a
    // checkpoint of another model is refused.
    std::uint64_t hash = fnv1a_basis;
    const auto    mix  = [&hash](const void *data, const std::size_t size) {
      hash = fnv1a(hash, data, size);
    };
    mix(mesh.coordinates.data(), mesh.coordinates.size() * sizeof(double));
    mix(mesh.cells.data(), mesh.cells.size() * sizeof(unsigned int));
    mix(system.mass.data(), system.mass.size() * sizeof(double));
    mix(system.damping.data(), system.damping.size() * sizeof(double));
    mix(&time_step, sizeof(double));
    mix(&n_steps, sizeof(n_steps));
    for (const auto &source : sources)
      {
        mix(source.nodes.data(), source.nodes.size() * sizeof(unsigned int));
        mix(source.direction, sizeof(source.direction));
        mix(&source.amplitude, sizeof(double));
        const double signal[4] = {source.signal.frequency,
                                  source.signal.n_cycles,
                                  source.signal.delay,
                                  source.signal.width};
        mix(signal, sizeof(signal));
      }
    mix(receiver_nodes.data(), receiver_nodes.size() * sizeof(unsigned int));
    mix(&parameters.receivers.record_interval, sizeof(unsigned int));
    return hash;
  }



  void
  Simulation::write_checkpoint(const unsigned int         step,
                               const std::vector<double> &u_previous,
                               const std::vector<double> &u_current,
                               const std::vector<double> &history,
                               const unsigned int         precision) const
  {
    // The checkpoint's series names only snapshots that are complete.
    finish_snapshots();
    Checkpoint checkpoint;
    checkpoint.fingerprint = fingerprint();
    checkpoint.precision   = precision;
    checkpoint.step        = step;
    checkpoint.u_previous  = u_previous;
    checkpoint.u_current   = u_current;
    checkpoint.history     = history;
    checkpoint.snapshots   = snapshots;
    const std::string data = serialize_checkpoint(checkpoint);
    // Through a partial file and a rename: an interruption while writing
    // leaves the previous checkpoint intact.
    AppUtilities::write_file(
      parameters.output.directory + "/checkpoint.bin",
      [&](std::ostream &out) {
        out << data;
      },
      true);
  }



  void
  Simulation::read_checkpoint(unsigned int        &step,
                              std::vector<double> &u_previous,
                              std::vector<double> &u_current,
                              std::vector<double> &history,
                              const unsigned int   precision)
  {
    const std::string name = parameters.output.directory + "/checkpoint.bin";
    errno                  = 0;
    std::ifstream in(name, std::ios::binary);
    AssertThrow(in,
                ExcMessage("Checkpoint/Restart is set, but " + name +
                           " cannot be opened: " + std::strerror(errno) + "."));
    const std::string data((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
    AssertThrow(!in.bad(),
                ExcMessage("Checkpoint/Restart is set, but " + name +
                           " cannot be read: " + std::strerror(errno) + "."));
    Checkpoint c = parse_checkpoint(data, name);

    // Whether it belongs to this model and run.
    const auto refuse = [&name](const std::string &what) {
      return ExcMessage(name + " cannot be continued: " + what + ".");
    };
    AssertThrow(c.fingerprint == fingerprint(),
                refuse("it was written for another model (mesh, materials, "
                       "time step, sources or receivers differ)"));
    AssertThrow(c.precision == precision,
                refuse("it was written in " +
                       std::string(c.precision == 4 ? "float" : "double") +
                       " precision, but 'Solver/Precision' is " +
                       parameters.solver.precision));
    AssertThrow(c.step <= n_steps,
                refuse("its step " + std::to_string(c.step) +
                       " lies beyond the run's " + std::to_string(n_steps) +
                       " steps"));
    const std::size_t per_record = 2 * receiver_nodes.size();
    AssertThrow(c.u_previous.size() == 2 * std::size_t(mesh.n_nodes) &&
                  c.history.size() % per_record == 0 &&
                  c.history.size() / per_record ==
                    c.step / parameters.receivers.record_interval,
                refuse("its state or receiver records do not match the "
                       "mesh, the receivers and the step"));
    step       = c.step;
    u_previous = std::move(c.u_previous);
    u_current  = std::move(c.u_current);
    history    = std::move(c.history);
    snapshots  = std::move(c.snapshots);
  }



  void
  Simulation::start_snapshot_writer()
  {
    const auto configure = [this](DataOut<2>                        &data_out,
                                  const std::vector<Vector<double>> &in) {
      data_out.attach_dof_handler(discretization.get_dof_handler());
      data_out.add_data_vector(
        in[0],
        std::vector<std::string>(2, "displacement"),
        DataOut<2>::type_dof_data,
        std::vector<DataComponentInterpretation::DataComponentInterpretation>(
          2,
          DataComponentInterpretation::component_is_part_of_vector));
      data_out.add_data_vector(in[1], "material_id");
      data_out.add_data_vector(in[2], "absorbing_damping");
      data_out.build_patches(discretization.get_mapping());
    };
    DataOutBase::VtkFlags flags;
    flags.compression_level    = parameters.output.compression;
    const unsigned int n_cells = tria.n_active_cells();
    snapshot_writer = std::make_unique<AppUtilities::SnapshotWriter<2>>(
      std::vector<std::size_t>{discretization.get_dof_handler().n_dofs(),
                               n_cells,
                               n_cells},
      configure,
      flags);
  }



  void
  Simulation::write_snapshot(const unsigned int         step,
                             const std::vector<double> &u)
  {
    TimerOutput::Scope scope(timer, "Output (snapshots)");
    char               base[32];
    std::snprintf(base, sizeof(base), "snapshot-%06u", step);
    const std::string directory = parameters.output.directory + "/";

    Vector<double> displacement;
    discretization.nodal_to_dof_vector(u, displacement);
    const unsigned int n_cells = tria.n_active_cells();

    auto records = snapshots;
    if (records.empty() || records.back().second != std::string(base) + ".vtu")
      records.emplace_back(step * time_step, std::string(base) + ".vtu");
    // The image of |u|, if asked for, is drawn there as well.
    std::string image, title;
    if (parameters.output.snapshot_images)
      {
        char text[96];
        std::snprintf(text,
                      sizeof(text),
                      "t = %.4g s (step %u)",
                      step * time_step,
                      step);
        image = directory + base + ".png";
        title = text;
      }
    // The image is drawn and encoded ahead, beside other snapshots' images,
    // and written after the snapshot's file and its record; an error in
    // drawing is thrown there too, after the record.
    struct Drawn
    {
      std::string        png;
      std::exception_ptr error;
    };
    const auto            drawn = std::make_shared<Drawn>();
    std::function<void()> draw;
    if (!image.empty())
      draw = [this, drawn, image, title, u]() {
        try
          {
            // The mesh outlives the writer, a member declared after it.
            drawn->png = field_image(image, mesh, u, 0, title).png();
          }
        catch (...)
          {
            drawn->error = std::current_exception();
          }
      };
    // The series names only files that were written whole: the record
    // follows its file on the writer's thread.
    snapshot_writer->write(
      directory + base + ".vtu",
      {std::vector<double>(displacement.begin(), displacement.end()), {}, {}},
      [directory, records, image, drawn]() {
        AppUtilities::write_file(directory + "snapshots.pvd",
                                 [&](std::ostream &out) {
                                   DataOutBase::write_pvd_record(out, records);
                                 });
        if (drawn->error)
          std::rethrow_exception(drawn->error);
        if (!image.empty())
          write_png_file(image, drawn->png);
      },
      // The cell fields depend on the fixed mesh only: they are filled on
      // the writer's thread, off the time loop.
      [this, n_cells](std::vector<std::vector<double>> &in) {
        in[1].resize(n_cells);
        in[2].resize(n_cells);
        for (const auto &cell : tria.active_cell_iterators())
          {
            in[1][cell->active_cell_index()] = cell->material_id();
            // The field is float in the file: the value DataOut writes.
            in[2][cell->active_cell_index()] =
              float(mesh.cell_extra_damping[cell->active_cell_index()]);
          }
      },
      std::move(draw));
    snapshots = records;
  }



  void
  Simulation::finish_snapshots() const
  {
    if (snapshot_writer)
      snapshot_writer->flush();
  }



  void
  Simulation::write_traces(const std::vector<double> &history) const
  {
    const unsigned int n_receivers = receiver_nodes.size();
    const unsigned int n_records   = history.size() / (2 * n_receivers);
    const double dt_record  = parameters.receivers.record_interval * time_step;
    const std::string  name = parameters.output.directory + "/traces.csv";
    std::ostringstream csv;
    for (unsigned int k = 0; k < n_receivers; ++k)
      csv << "# receiver " << k << ": asked for ("
          << parameters.receivers.points[k][0] << ", "
          << parameters.receivers.points[k][1] << "), node at ("
          << mesh.coordinates[2 * receiver_nodes[k]] << ", "
          << mesh.coordinates[2 * receiver_nodes[k] + 1] << ")\n";
    csv << "time";
    for (unsigned int k = 0; k < n_receivers; ++k)
      csv << ",r" << k << "_ux,r" << k << "_uy";
    csv << '\n' << std::setprecision(17);
    std::vector<double>              times = {0};
    std::vector<std::vector<double>> ux(n_receivers, {0.}),
      uy(n_receivers, {0.});
    csv << 0.;
    for (unsigned int k = 0; k < n_receivers; ++k)
      csv << ",0,0";
    csv << '\n';
    for (unsigned int r = 0; r < n_records; ++r)
      {
        const double t = (r + 1) * dt_record;
        times.push_back(t);
        csv << t;
        for (unsigned int k = 0; k < n_receivers; ++k)
          {
            const double x = history[(r * n_receivers + k) * 2],
                         y = history[(r * n_receivers + k) * 2 + 1];
            csv << ',' << x << ',' << y;
            ux[k].push_back(x);
            uy[k].push_back(y);
          }
        csv << '\n';
      }
    AppUtilities::write_file(name, [&](std::ostream &out) {
      out << csv.str();
    });
    std::vector<std::string> labels;
    for (unsigned int k = 0; k < n_receivers; ++k)
      {
        char label[64];
        std::snprintf(label,
                      sizeof(label),
                      "R%u (%.3g, %.3g)",
                      k,
                      mesh.coordinates[2 * receiver_nodes[k]],
                      mesh.coordinates[2 * receiver_nodes[k] + 1]);
        labels.push_back(label);
      }
    plot_traces(parameters.output.directory + "/traces.png",
                times,
                ux,
                uy,
                labels);
  }



  void
  Simulation::stop_on_non_finite(const unsigned int         step,
                                 const std::string         &what,
                                 const FiniteState         &last_finite,
                                 const std::vector<double> &history,
                                 const std::size_t          n_finite_records,
                                 const unsigned int         precision)
  {
    // What is left: the last finite state as a snapshot, unless it is one
    // already, and the receiver traces up to the first non-finite record.
    if (!last_finite.written)
      write_snapshot(last_finite.step, last_finite.u_current);
    finish_snapshots();
    write_traces(
      std::vector<double>(history.begin(), history.begin() + n_finite_records));
    const unsigned int traced_step = n_finite_records /
                                     (2 * receiver_nodes.size()) *
                                     parameters.receivers.record_interval;
    char snapshot[32];
    std::snprintf(snapshot,
                  sizeof(snapshot),
                  "snapshot-%06u.vtu",
                  last_finite.step);
    const double largest =
      std::max(AppUtilities::largest_magnitude(last_finite.u_current),
               AppUtilities::largest_magnitude(last_finite.u_previous));
    AssertThrow(
      false,
      ExcMessage(
        "The simulation stopped at step " + std::to_string(step) + " (t = " +
        AppUtilities::significant(step * time_step) + " s): " + what +
        ", not a finite number. The last finite state, of step " +
        std::to_string(last_finite.step) + ", is in " +
        parameters.output.directory + "/" + snapshot +
        ", the receiver traces up to step " + std::to_string(traced_step) +
        " in traces.csv. Its largest displacement is " +
        AppUtilities::significant(largest) + " m. Likely cause: " +
        (precision == sizeof(float) ?
           "displacements beyond the range of float (about 3.4e38; "
           "'Solver/Precision' = float)" :
           "displacements beyond the range of double") +
        ", from 'Source/Amplitude' = " +
        AppUtilities::significant(parameters.source.amplitude) +
        " or from growth the time step does not bound (check the materials "
        "and 'Time/Time step')."));
  }



  template <typename Number>
  void
  Simulation::time_loop()
  {
    std::unique_ptr<Stepper<Number>> stepper;
    {
      TimerOutput::Scope scope(timer, "Set-up (plan, upload)");
      const Plan<Number> plan = make_plan<Number>(system,
                                                  blocks,
                                                  time_step,
                                                  stable_time_step,
                                                  sources,
                                                  receiver_nodes,
                                                  n_steps);
      if (use_gpu)
        stepper = std::make_unique<DeviceStepper<Number>>();
      else
        stepper = std::make_unique<HostStepper<Number>>();
      stepper->reinit(plan, parameters.receivers.record_interval);
      pcout << "Plan: L_av = " << plan.average_warp_links()
            << " links per warp (" << plan.unsorted_average_warp_links
            << " without sorting nodes by links), "
            << plan.bytes_per_step() / 1e6 << " MB moved per step ("
            << plan.describe_bytes_per_step() << ")" << std::endl;
    }
    const unsigned int  precision = sizeof(Number);
    std::vector<double> u_previous, u_current;
    if (parameters.checkpoint.restart)
      {
        unsigned int        step;
        std::vector<double> history;
        read_checkpoint(step, u_previous, u_current, history, precision);
        const unsigned int stop_after = parameters.checkpoint.stop_after;
        AssertThrow(stop_after == 0 || stop_after > step,
                    ExcMessage("'Checkpoint/Stop after steps' = " +
                               std::to_string(stop_after) +
                               " is not more than the step the checkpoint "
                               "resumes from (" +
                               std::to_string(step) +
                               "): the run would stop at once. Give a "
                               "larger count, or 0 to run to the end."));
        stepper->set_state(step, u_previous, u_current);
        stepper->set_receiver_history(history);
        pcout << "Restarted from the checkpoint at step " << step
              << " (t = " << step * time_step << " s)" << std::endl;
      }
    else
      {
        stepper->get_state(u_previous, u_current);
        write_snapshot(0, u_current);
      }

    // Non-finite numbers never reach a file: the receiver records (on the
    // host after every advance) are checked after every advance, the state
    // wherever it is copied to the host (snapshots, checkpoints, the end).
    // The last state that passed is kept, to be written if a later one
    // fails.
    FiniteState last_finite{stepper->step(),
                            u_previous,
                            u_current,
                            !parameters.checkpoint.restart};
    std::size_t checked_records = stepper->receiver_history().size();
    const auto  check_records   = [&]() {
      const std::vector<double> &history    = stepper->receiver_history();
      const std::size_t          per_record = 2 * receiver_nodes.size();
      for (std::size_t i = checked_records; i < history.size(); ++i)
        if (!std::isfinite(history[i]))
          {
            const std::size_t  record = i / per_record;
            const unsigned int k      = (i % per_record) / 2;
            stop_on_non_finite(
              stepper->step(),
              "receiver " + std::to_string(k) + " recorded " +
                (i % 2 == 0 ? "u_x = " : "u_y = ") +
                AppUtilities::significant(history[i]) + " at step " +
                std::to_string((record + 1) *
                               parameters.receivers.record_interval),
              last_finite,
              history,
              record * per_record,
              precision);
          }
      checked_records = history.size();
    };
    const auto check_state = [&]() {
      for (const auto *state : {&u_current, &u_previous})
        if (const std::size_t i = AppUtilities::first_non_finite(*state);
            i < state->size())
          stop_on_non_finite(
            stepper->step(),
            "the displacement of node " + std::to_string(i / 2) + " at (" +
              AppUtilities::significant(mesh.coordinates[i / 2 * 2]) + ", " +
              AppUtilities::significant(mesh.coordinates[i / 2 * 2 + 1]) +
              ") is " + (i % 2 == 0 ? "u_x = " : "u_y = ") +
              AppUtilities::significant((*state)[i]) +
              (state == &u_previous ? " at the step before" : ""),
            last_finite,
            stepper->receiver_history(),
            checked_records,
            precision);
    };

    const Parameters::Output     &output        = parameters.output;
    const Parameters::Checkpoint &checkpoint    = parameters.checkpoint;
    const auto                    next_multiple = [](const unsigned int step,
                                  const unsigned int interval) {
      return interval == 0 ? std::numeric_limits<unsigned int>::max() :
                                                (step / interval + 1) * interval;
    };
    auto               last_progress = std::chrono::steady_clock::now();
    const auto         start         = last_progress;
    const unsigned int first_step    = stepper->step();
    bool               stopped       = false;
    while (stepper->step() < n_steps && !stopped)
      {
        const unsigned int step = stepper->step();
        unsigned int       next =
          std::min({n_steps,
                    next_multiple(step, output.snapshot_interval),
                    next_multiple(step, checkpoint.interval),
                    step + 1000});
        if (checkpoint.stop_after > step)
          next = std::min(next, checkpoint.stop_after);
        {
          TimerOutput::Scope scope(timer, "Time stepping");
          stepper->advance(next - step);
        }
        check_records();
        const unsigned int now = stepper->step();
        stopped = checkpoint.stop_after > 0 && now >= checkpoint.stop_after &&
                  now < n_steps;
        const bool snapshot =
          output.snapshot_interval > 0 && now % output.snapshot_interval == 0;
        const bool save = stopped || (checkpoint.interval > 0 &&
                                      now % checkpoint.interval == 0);
        if (snapshot || save)
          {
            // The copy to the host is the snapshot's where there is one.
            TimerOutput::Scope scope(timer,
                                     snapshot ? "Output (snapshots)" :
                                                "Checkpoints");
            stepper->get_state(u_previous, u_current);
            check_state();
            last_finite = {now, u_previous, u_current, snapshot};
          }
        if (snapshot)
          write_snapshot(now, u_current);
        if (save)
          {
            {
              // The checkpoint's series names only complete snapshots: the
              // wait for them is output's.
              TimerOutput::Scope scope(timer, "Output (snapshots)");
              finish_snapshots();
            }
            TimerOutput::Scope scope(timer, "Checkpoints");
            write_checkpoint(now,
                             u_previous,
                             u_current,
                             stepper->receiver_history(),
                             precision);
          }
        const double since = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - last_progress)
                               .count();
        if (since >= output.progress_interval || now == n_steps || stopped)
          {
            const double elapsed = std::chrono::duration<double>(
                                     std::chrono::steady_clock::now() - start)
                                     .count();
            const double rate = (now - first_step) / std::max(elapsed, 1e-9);
            pcout << "  step " << now << " / " << n_steps
                  << ", t = " << now * time_step << " s, "
                  << std::setprecision(4) << rate << " steps/s, "
                  << rate * mesh.n_nodes / 1e6 << " M node updates/s, about "
                  << (n_steps - now) / std::max(rate, 1e-9) << " s left"
                  << std::setprecision(6) << std::endl;
            last_progress = std::chrono::steady_clock::now();
          }
      }
    if (stopped)
      {
        {
          TimerOutput::Scope scope(timer, "Output (traces)");
          write_traces(stepper->receiver_history());
        }
        pcout << "Stopped after step " << stepper->step()
              << " as 'Stop after steps' asks; checkpoint written. Set "
                 "'Restart = true' to continue."
              << std::endl;
        print_output_share();
        return;
      }
    {
      TimerOutput::Scope scope(timer, "Output (snapshots)");
      stepper->get_state(u_previous, u_current);
      check_state();
    }
    if (snapshots.empty() ||
        snapshots.back().first < stepper->step() * time_step * (1 - 1e-12))
      write_snapshot(stepper->step(), u_current);
    // The traces are written while the writer's threads finish the last
    // snapshots.
    {
      TimerOutput::Scope scope(timer, "Output (traces)");
      write_traces(stepper->receiver_history());
    }
    {
      TimerOutput::Scope scope(timer, "Output (snapshots)");
      finish_snapshots();
    }
    {
      TimerOutput::Scope scope(timer, "Checkpoints");
      write_checkpoint(stepper->step(),
                       u_previous,
                       u_current,
                       stepper->receiver_history(),
                       precision);
    }
    pcout << "Wrote " << parameters.output.directory
          << "/traces.csv, traces.png, checkpoint.bin, snapshots.pvd and "
          << snapshots.size() << " snapshots." << std::endl;
    print_output_share();
  }



  void
  Simulation::print_output_share() const
  {
    double loop_seconds = 0;
    for (const auto &[section, seconds] :
         timer.get_summary_data(TimerOutput::total_wall_time))
      if (section.rfind("Output", 0) == 0)
        loop_seconds += seconds;
    pcout << AppUtilities::describe_output_share(loop_seconds,
                                                 AppUtilities::seconds_since(
                                                   started),
                                                 snapshot_writer.get())
          << std::endl;
  }



  void
  Simulation::run()
  {
    {
      std::error_code error;
      std::filesystem::create_directories(parameters.output.directory, error);
      AssertThrow(!error,
                  ExcMessage("Output/Directory: '" +
                             parameters.output.directory +
                             "' cannot be created: " + error.message() + "."));
    }
    make_grid();
    setup();
    if (parameters.solver.precision == "double")
      time_loop<double>();
    else
      time_loop<float>();
  }
} // namespace Wave2D
