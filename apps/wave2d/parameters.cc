// SPDX-License-Identifier: LGPL-2.1-or-later
#include "parameters.h"

#include <deal.II/base/exceptions.h>
#include <deal.II/base/utilities.h>

#include <cmath>

#include "../common/app_utilities.h"

namespace Wave2D
{
  using namespace dealii;

  namespace
  {
    std::vector<double>
    numbers(const std::string &text, const std::string &entry)
    {
      std::vector<double> result;
      for (const std::string &item : Utilities::split_string_list(text, ','))
        {
          try
            {
              std::size_t  used  = 0;
              const double value = std::stod(item, &used);
              AssertThrow(used == item.size(), ExcMessage(""));
              result.push_back(value);
            }
          catch (...)
            {
              AssertThrow(false,
                          ExcMessage("In '" + entry + "': '" + item +
                                     "' is not a number."));
            }
          AssertThrow(std::isfinite(result.back()),
                      ExcMessage("In '" + entry + "': '" + item +
                                 "' is not a finite number."));
        }
      return result;
    }
  } // namespace



  void
  Parameters::Mesh::declare(ParameterHandler &prm)
  {
    prm.enter_subsection("Mesh");
    prm.declare_entry("Mesh file",
                      "",
                      Patterns::FileName(),
                      "A 2D mesh of linear triangles or bilinear "
                      "quadrilaterals: Abaqus .inp (element sets become "
                      "materials, named in 'Materials'), Gmsh .msh (physical "
                      "groups become material ids) or VTK .vtk (MaterialID "
                      "cell data). Empty: the built-in plate below.");
    prm.declare_entry("Cell type",
                      "triangles",
                      Patterns::Selection("triangles|quadrilaterals"),
                      "Cells of the built-in plate.");
    prm.declare_entry("Plate width", "0.04", Patterns::Double(0.), "Units: m.");
    prm.declare_entry("Plate height",
                      "0.02",
                      Patterns::Double(0.),
                      "Units: m.");
    prm.declare_entry("Element size",
                      "2e-4",
                      Patterns::Double(0.),
                      "Largest node spacing of the built-in plate, reached "
                      "by refining a coarse mesh. About 15 nodes per shortest "
                      "wavelength keep the phase-speed error near 0.5 %. "
                      "Units: m.");
    prm.declare_entry("Defect",
                      "hole",
                      Patterns::Selection("hole|none"),
                      "An internal circular hole (a side-drilled hole, the "
                      "classic ultrasonic reflector) or none.");
    prm.declare_entry("Hole x", "0.02", Patterns::Double(), "Units: m.");
    prm.declare_entry("Hole y", "0.01", Patterns::Double(), "Units: m.");
    prm.declare_entry("Hole radius",
                      "0.001",
                      Patterns::Double(0.),
                      "Units: m.");
    prm.leave_subsection();
  }



  void
  Parameters::Mesh::parse(ParameterHandler &prm)
  {
    prm.enter_subsection("Mesh");
    mesh_file    = prm.get("Mesh file");
    cell_type    = prm.get("Cell type");
    width        = prm.get_double("Plate width");
    height       = prm.get_double("Plate height");
    element_size = prm.get_double("Element size");
    defect       = prm.get("Defect");
    hole_x       = prm.get_double("Hole x");
    hole_y       = prm.get_double("Hole y");
    hole_radius  = prm.get_double("Hole radius");
    prm.leave_subsection();
    AssertThrow(width > 0 && height > 0 && element_size > 0,
                ExcMessage("Mesh: plate width, height and element size must "
                           "be positive."));
    AssertThrow(element_size <= 0.25 * std::min(width, height),
                ExcMessage("Mesh: the element size must be at most a "
                           "quarter of the plate's width and height."));
    if (defect == "hole" && mesh_file.empty())
      AssertThrow(hole_radius > 0 && hole_x - 2 * hole_radius > 0 &&
                    hole_x + 2 * hole_radius < width &&
                    hole_y - 2 * hole_radius > 0 &&
                    hole_y + 2 * hole_radius < height,
                  ExcMessage("Mesh: the hole (with a margin of one radius) "
                             "must lie inside the plate."));
  }



  void
  Parameters::Absorbing::declare(ParameterHandler &prm)
  {
    prm.enter_subsection("Absorbing layers");
    prm.declare_entry("Sides",
                      "left, right",
                      Patterns::MultipleSelection("left|right|bottom|top"),
                      "Sides of the mesh's bounding box that get an absorbing "
                      "layer inside the mesh: mass-proportional damping "
                      "growing as the cube of the depth into the layer "
                      "(Pogo Sec. 4.3). Empty: none.");
    prm.declare_entry("Thickness",
                      "0.005",
                      Patterns::Double(0.),
                      "Two or more wavelengths absorb well. Units: m.");
    prm.declare_entry("Maximum damping",
                      "3e7",
                      Patterns::Double(0.),
                      "Damping coefficient at the outer edge (about 2 pi f "
                      "times 2 to 4 works; more than 1000 over the time "
                      "step is refused: such a layer reflects). Units: "
                      "1/s.");
    prm.leave_subsection();
  }



  void
  Parameters::Absorbing::parse(ParameterHandler &prm)
  {
    prm.enter_subsection("Absorbing layers");
    sides       = Utilities::split_string_list(prm.get("Sides"), ',');
    thickness   = prm.get_double("Thickness");
    max_damping = prm.get_double("Maximum damping");
    prm.leave_subsection();
    AssertThrow(sides.empty() || thickness > 0,
                ExcMessage("Absorbing layers: the thickness must be "
                           "positive."));
  }



  void
  Parameters::Source::declare(ParameterHandler &prm)
  {
    prm.enter_subsection("Source");
    prm.declare_entry("Type",
                      "force",
                      Patterns::Selection("force|displacement"),
                      "A force on every node of the region (N per metre of "
                      "thickness), or a prescribed displacement of them (m; "
                      "both components are then prescribed).");
    prm.declare_entry("Region",
                      "0.014, 0.02, 0.016, 0.02",
                      Patterns::List(Patterns::Double(), 4, 4),
                      "Box x0, y0, x1, y1 holding the source's nodes (a "
                      "transducer on the surface: y0 = y1 on the edge). "
                      "Units: m.");
    prm.declare_entry("Direction",
                      "0, -1",
                      Patterns::List(Patterns::Double(), 2, 2),
                      "Direction (x, y) of the force or displacement.");
    prm.declare_entry("Amplitude", "1", Patterns::Double(), "Units: N/m or m.");
    prm.declare_entry("Signal",
                      "hann",
                      Patterns::Selection("hann|gaussian"),
                      "Hann-windowed tone burst, or Gaussian "
                      "exp(-((t - delay) / width)^2).");
    prm.declare_entry("Frequency",
                      "2e6",
                      Patterns::Double(0.),
                      "Centre frequency of the tone burst. Units: Hz.");
    prm.declare_entry("Cycles",
                      "5",
                      Patterns::Double(0.),
                      "Of the tone burst.");
    prm.declare_entry("Delay",
                      "0",
                      Patterns::Double(0.),
                      "Start of the burst, or centre of the Gaussian. "
                      "Units: s.");
    prm.declare_entry("Width",
                      "1e-7",
                      Patterns::Double(0.),
                      "Width of the Gaussian. Units: s.");
    prm.declare_entry("Fixed region",
                      "",
                      Patterns::Anything(),
                      "Empty, or a box x0, y0, x1, y1 whose nodes are "
                      "clamped (zero displacement). Units: m.");
    prm.leave_subsection();
  }



  void
  Parameters::Source::parse(ParameterHandler &prm)
  {
    prm.enter_subsection("Source");
    type         = prm.get("Type");
    const auto r = numbers(prm.get("Region"), "Source/Region");
    std::copy(r.begin(), r.end(), region.begin());
    const auto d = numbers(prm.get("Direction"), "Source/Direction");
    std::copy(d.begin(), d.end(), direction.begin());
    amplitude    = prm.get_double("Amplitude");
    signal       = prm.get("Signal");
    frequency    = prm.get_double("Frequency");
    cycles       = prm.get_double("Cycles");
    delay        = prm.get_double("Delay");
    width        = prm.get_double("Width");
    fixed_region = numbers(prm.get("Fixed region"), "Source/Fixed region");
    prm.leave_subsection();
    AssertThrow(region[0] <= region[2] && region[1] <= region[3],
                ExcMessage("Source/Region: x0 <= x1 and y0 <= y1 needed."));
    AssertThrow(direction[0] != 0 || direction[1] != 0,
                ExcMessage("Source/Direction must not be zero."));
    AssertThrow(fixed_region.empty() || fixed_region.size() == 4,
                ExcMessage("Source/Fixed region: empty or four numbers "
                           "x0, y0, x1, y1."));
    AssertThrow(frequency > 0 && cycles > 0 && width > 0,
                ExcMessage("Source: frequency, cycles and width must be "
                           "positive."));
  }



  void
  Parameters::Receivers::declare(ParameterHandler &prm)
  {
    prm.enter_subsection("Receivers");
    prm.declare_entry("Points",
                      "0.015, 0.02; 0.025, 0.02; 0.02, 0",
                      Patterns::Anything(),
                      "Points x, y separated by ';'. Each records the "
                      "displacement history of the node nearest to it. "
                      "Units: m.");
    prm.declare_entry("Record interval",
                      "1",
                      Patterns::Integer(1),
                      "Record every this many steps.");
    prm.leave_subsection();
  }



  void
  Parameters::Receivers::parse(ParameterHandler &prm)
  {
    prm.enter_subsection("Receivers");
    points.clear();
    for (const std::string &point :
         Utilities::split_string_list(prm.get("Points"), ';'))
      {
        const auto xy = numbers(point, "Receivers/Points");
        AssertThrow(xy.size() == 2,
                    ExcMessage("Receivers/Points: '" + point +
                               "' is not a point x, y."));
        points.push_back({{xy[0], xy[1]}});
      }
    record_interval = prm.get_integer("Record interval");
    prm.leave_subsection();
  }



  void
  Parameters::Time::declare(ParameterHandler &prm)
  {
    prm.enter_subsection("Time");
    prm.declare_entry("End time", "1.5e-5", Patterns::Double(0.), "Units: s.");
    prm.declare_entry("Time step",
                      "0",
                      Patterns::Double(0.),
                      "0: the Courant number times the stability limit "
                      "2 / sqrt(lambda_max(M^-1 K)). A time step above the "
                      "limit is refused. Units: s.");
    prm.declare_entry("Courant number",
                      "0.8",
                      Patterns::Double(0., 1.),
                      "Fraction of the stability limit used when the time "
                      "step is 0.");
    prm.leave_subsection();
  }



  void
  Parameters::Time::parse(ParameterHandler &prm)
  {
    prm.enter_subsection("Time");
    end_time       = prm.get_double("End time");
    time_step      = prm.get_double("Time step");
    courant_number = prm.get_double("Courant number");
    prm.leave_subsection();
    AssertThrow(end_time > 0 && courant_number > 0,
                ExcMessage("Time: the end time and the Courant number must "
                           "be positive."));
  }



  void
  Parameters::Solver::declare(ParameterHandler &prm)
  {
    prm.enter_subsection("Solver");
    prm.declare_entry("Device",
                      "auto",
                      Patterns::Selection("auto|gpu|host"),
                      "auto: the GPU if there is one, else the host.");
    prm.declare_entry("Precision",
                      "double",
                      Patterns::Selection("double|float"),
                      "");
    prm.declare_entry("Partitioner",
                      "aligned",
                      Patterns::Selection("aligned|greedy"),
                      "Node blocks: Pogo's aligned advancing-front "
                      "partitioner or the greedy one.");
    prm.declare_entry("Nodes per block",
                      "512",
                      Patterns::Integer(32, 1024),
                      "Threads per GPU block, a multiple of 32.");
    prm.leave_subsection();
  }



  void
  Parameters::Solver::parse(ParameterHandler &prm)
  {
    prm.enter_subsection("Solver");
    device          = prm.get("Device");
    precision       = prm.get("Precision");
    partitioner     = prm.get("Partitioner");
    nodes_per_block = prm.get_integer("Nodes per block");
    prm.leave_subsection();
    AssertThrow(nodes_per_block % 32 == 0,
                ExcMessage("Solver/Nodes per block must be a multiple of 32, "
                           "not " +
                           std::to_string(nodes_per_block) + "."));
  }



  void
  Parameters::Output::declare(ParameterHandler &prm)
  {
    prm.enter_subsection("Output");
    prm.declare_entry("Directory",
                      "output-wave2d",
                      Patterns::DirectoryName(),
                      "");
    prm.declare_entry("Snapshot interval",
                      "200",
                      Patterns::Integer(0),
                      "Write the field as VTU (listed in snapshots.pvd) every "
                      "this many steps; 0: only at the end.");
    prm.declare_entry("Snapshot images",
                      "true",
                      Patterns::Bool(),
                      "Also render each snapshot's displacement magnitude as "
                      "a PNG.");
    prm.declare_entry("Progress interval",
                      "5",
                      Patterns::Double(0.),
                      "Seconds of wall time between progress lines.");
    // Snapshots of large models are written often: favour speed over size.
    AppUtilities::declare_compression_entry(prm, "best speed");
    prm.leave_subsection();
  }



  void
  Parameters::Output::parse(ParameterHandler &prm)
  {
    prm.enter_subsection("Output");
    directory         = prm.get("Directory");
    snapshot_interval = prm.get_integer("Snapshot interval");
    snapshot_images   = prm.get_bool("Snapshot images");
    progress_interval = prm.get_double("Progress interval");
    compression       = AppUtilities::parse_compression_entry(prm);
    prm.leave_subsection();
  }



  void
  Parameters::Checkpoint::declare(ParameterHandler &prm)
  {
    prm.enter_subsection("Checkpoint");
    prm.declare_entry("Interval",
                      "2000",
                      Patterns::Integer(0),
                      "Write <Directory>/checkpoint.bin every this many "
                      "steps (atomically: a crash while writing keeps the "
                      "previous one) and at the end; 0: only at the end.");
    prm.declare_entry("Restart",
                      "false",
                      Patterns::Bool(),
                      "Continue from <Directory>/checkpoint.bin. The model "
                      "must be the same; an interrupted run then loses "
                      "nothing: traces and snapshots continue where the "
                      "checkpoint left them.");
    prm.declare_entry("Stop after steps",
                      "0",
                      Patterns::Integer(0),
                      "0: run to the end time. Otherwise stop, with a "
                      "checkpoint, once this many steps are done (as an "
                      "interruption would).");
    prm.leave_subsection();
  }



  void
  Parameters::Checkpoint::parse(ParameterHandler &prm)
  {
    prm.enter_subsection("Checkpoint");
    interval   = prm.get_integer("Interval");
    restart    = prm.get_bool("Restart");
    stop_after = prm.get_integer("Stop after steps");
    prm.leave_subsection();
  }



  void
  Parameters::declare_parameters(ParameterHandler &prm)
  {
    Parameters p;
    p.mesh.declare(prm);
    prm.enter_subsection("Materials");
    prm.declare_entry(
      "Materials",
      "0: 210e9, 0.29, 7850, 0",
      Patterns::Anything(),
      "One entry per material, separated by ';': KEY: E, nu, rho, damping. "
      "KEY is the cells' material id, or for an Abaqus .inp mesh the name "
      "of an element set. E: Young's modulus (Pa), nu: Poisson's ratio in "
      "[0, 0.5), rho: density (kg/m^3), damping: mass-proportional damping "
      "coefficient (1/s). Plane strain.");
    prm.leave_subsection();
    p.absorbing.declare(prm);
    p.source.declare(prm);
    p.receivers.declare(prm);
    p.time.declare(prm);
    p.solver.declare(prm);
    p.output.declare(prm);
    p.checkpoint.declare(prm);
  }



  void
  Parameters::parse_parameters(ParameterHandler &prm)
  {
    mesh.parse(prm);
    prm.enter_subsection("Materials");
    materials.clear();
    for (const std::string &entry :
         Utilities::split_string_list(prm.get("Materials"), ';'))
      {
        const auto colon = entry.find(':');
        AssertThrow(colon != std::string::npos,
                    ExcMessage("Materials: '" + entry +
                               "' is not of the form KEY: E, nu, rho, "
                               "damping."));
        Material m;
        m.key = Utilities::trim(entry.substr(0, colon));
        const auto values =
          numbers(entry.substr(colon + 1), "Materials/" + m.key);
        AssertThrow(values.size() == 4 && !m.key.empty(),
                    ExcMessage("Materials: '" + entry +
                               "' needs a key and four numbers: E, nu, rho, "
                               "damping."));
        m.youngs_modulus = values[0];
        m.poissons_ratio = values[1];
        m.density        = values[2];
        m.damping        = values[3];
        AssertThrow(m.youngs_modulus > 0,
                    ExcMessage("Materials/" + m.key +
                               ": Young's modulus must be positive."));
        AssertThrow(m.poissons_ratio >= 0 && m.poissons_ratio < 0.5,
                    ExcMessage("Materials/" + m.key +
                               ": Poisson's ratio must lie in [0, 0.5)."));
        AssertThrow(m.density > 0,
                    ExcMessage("Materials/" + m.key +
                               ": the density must be positive."));
        AssertThrow(m.damping >= 0,
                    ExcMessage("Materials/" + m.key +
                               ": the damping must not be negative."));
        materials.push_back(m);
      }
    AssertThrow(!materials.empty(),
                ExcMessage("Materials: at least one material is needed."));
    prm.leave_subsection();
    absorbing.parse(prm);
    source.parse(prm);
    receivers.parse(prm);
    time.parse(prm);
    solver.parse(prm);
    output.parse(prm);
    checkpoint.parse(prm);
    changed_entries = AppUtilities::changed_entries(prm, declare_parameters);
    check_entries_used(prm);
  }



  void
  Parameters::check_entries_used(const ParameterHandler &prm) const
  {
    const auto refuse = [&](const std::vector<std::string> &entries,
                            const std::string              &why) {
      AppUtilities::refuse_unused(changed_entries, prm, entries, why);
    };
    const std::vector<std::string> hole = {"Mesh/Hole x",
                                           "Mesh/Hole y",
                                           "Mesh/Hole radius"};
    if (!mesh.mesh_file.empty())
      {
        std::vector<std::string> plate = {"Mesh/Cell type",
                                          "Mesh/Plate width",
                                          "Mesh/Plate height",
                                          "Mesh/Element size",
                                          "Mesh/Defect"};
        plate.insert(plate.end(), hole.begin(), hole.end());
        refuse(plate,
               "it describes the built-in plate, and 'Mesh/Mesh file' = '" +
                 mesh.mesh_file +
                 "' is read instead. Remove the entry, or the mesh file.");
      }
    else if (mesh.defect == "none")
      refuse(hole,
             "'Mesh/Defect' = none, so the plate has no hole. Set "
             "'Defect' to hole, or remove the entry.");
    if (absorbing.sides.empty())
      refuse({"Absorbing layers/Thickness", "Absorbing layers/Maximum damping"},
             "'Absorbing layers/Sides' is empty, so there is no absorbing "
             "layer. Name the sides, or remove the entry.");
    if (source.signal == "gaussian")
      refuse({"Source/Frequency", "Source/Cycles"},
             "'Source/Signal' = gaussian is shaped by 'Delay' and 'Width' "
             "only. Set 'Signal' to hann for a tone burst, or remove the "
             "entry.");
    else
      refuse({"Source/Width"},
             "'Source/Signal' = hann, a tone burst of 'Frequency' and "
             "'Cycles'; 'Width' shapes the Gaussian only. Set 'Signal' to "
             "gaussian, or remove the entry.");
    if (time.time_step > 0)
      refuse({"Time/Courant number"},
             "'Time/Time step' is given, so the Courant number does not "
             "choose it. Set 'Time step' to 0, or remove the entry.");
  }



  void
  Parameters::check_intervals(const unsigned int n_steps,
                              std::ostream      &log) const
  {
    AppUtilities::check_interval(changed_entries,
                                 "Output/Snapshot interval",
                                 output.snapshot_interval,
                                 n_steps,
                                 "only the first and the last snapshot would "
                                 "be written, as with 0",
                                 true,
                                 log);
    AppUtilities::check_interval(changed_entries,
                                 "Checkpoint/Interval",
                                 checkpoint.interval,
                                 n_steps,
                                 "only the last checkpoint would be "
                                 "written, as with 0",
                                 true,
                                 log);
    // The default, 1, fits every run: a larger value is set.
    AppUtilities::check_interval({"Receivers/Record interval"},
                                 "Receivers/Record interval",
                                 receivers.record_interval,
                                 n_steps,
                                 "the receivers would record nothing",
                                 true,
                                 log);
    AssertThrow(checkpoint.stop_after < n_steps,
                ExcMessage("'Checkpoint/Stop after steps' = " +
                           std::to_string(checkpoint.stop_after) +
                           " is not less than the run's " +
                           std::to_string(n_steps) +
                           " steps: the run ends first and would not stop "
                           "early. Choose fewer steps, or 0."));
  }
} // namespace Wave2D
