// SPDX-License-Identifier: LGPL-2.1-or-later
// The GPU TLED stepper against the host stepper, 1000 steps of a
// compressed cube (distorted hexahedra with hourglass control, and
// tetrahedra) with rollers, a ramped prescribed displacement, a load and
// damping: in double the states are bitwise equal (the arithmetic and its
// order are the same), with graphs of 300 steps and of 7 (graphs for each
// position of the three state buffers) and with direct launches alike; in
// float too, and the float states stay within 1e-3 of the double ones
// (printed). The fused nodal sum gives the same states, bitwise, as the
// plan and as the host's fused stepper (the same additions in the same
// order), for node blocks of 32 to 256 nodes, and two runs are bitwise
// equal. The atomic nodal sum agrees with the plan to 1e-9. A cube
// pressed through itself stops at the first step that is not finite, at
// the host's step and node with bitwise the host's last finite state, for
// every graph and advance() size. On a cube sized to the device's L2 the
// plan reads its element data evict-first, and as usual on a cube whose
// element forces and nodal state do not fit in L2, with bitwise the host's
// states on both. Exits with 77 (skipped) without a CUDA device.

#include <deal.II/grid/grid_generator.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/tled/tled_mesh.h>
#include <gpu_assembly/tled/tled_stepper.h>

#include "../tests.h"
#include "../tled_test_meshes.h"
#include "gpu_tests.h"

using namespace GPUAssembly::TLED;

namespace
{
  template <typename Number>
  void
  run(Stepper<Number>          &stepper,
      const Model<Number>      &model,
      const BoundaryConditions &bc,
      const Integration        &integration,
      const unsigned int        n_steps,
      const unsigned int        chunk,
      std::vector<double>      &u_prev,
      std::vector<double>      &u_curr)
  {
    stepper.reinit(model, bc, integration);
    for (unsigned int done = 0; done < n_steps; done += chunk)
      stepper.advance(std::min(chunk, n_steps - done));
    stepper.get_state(u_prev, u_curr);
  }

  void
  check_mesh(Testing::Checks &checks, const Mesh &mesh, const std::string &name)
  {
    const double        L        = 1;
    const unsigned int  n_steps  = 1000;
    const Material      material = Testing::truth_cube_material();
    const Model<double> model    = make_model<double>(mesh, material);
    const Model<float>  model_f  = make_model<float>(mesh, material);
    Integration         integration;
    integration.time_step = 0.5 * model.critical_time_step;
    integration.damping   = 2.;
    const BoundaryConditions bc =
      Testing::compression_conditions(mesh,
                                      L,
                                      0.1,
                                      600 * integration.time_step,
                                      0.01);

    std::vector<double> host_prev, host_curr, prev, curr;
    HostStepper<double> host;
    run(host, model, bc, integration, n_steps, n_steps, host_prev, host_curr);
    double moved = 0;
    for (const double x : host_curr)
      moved = std::max(moved, std::abs(x));
    checks.check(moved > 0.05,
                 name + ": the cube was compressed (max |u| = " +
                   Testing::scientific(moved) + ")");

    for (const NodalSum sum : {NodalSum::plan, NodalSum::fused})
      for (const unsigned int graph : {300u, 7u})
        for (const unsigned int chunk : {n_steps, 250u})
          {
            DeviceStepper<double> device(sum, graph);
            run(device, model, bc, integration, n_steps, chunk, prev, curr);
            checks.check(
              prev == host_prev && curr == host_curr,
              name + ", double, " +
                (sum == NodalSum::plan ? "plan, " : "fused, ") +
                std::to_string(graph) + " steps per graph, advance() by " +
                std::to_string(chunk) +
                ": GPU states bitwise equal to the host's after " +
                std::to_string(n_steps) + " steps (max difference " +
                Testing::scientific(
                  Testing::max_relative_difference(curr, host_curr)) +
                ")");
          }

    // The fused sum adds each node's element forces in the plan's order:
    // bitwise equal to the host's fused stepper (itself equal to the plan),
    // for every block size, and from run to run.
    {
      std::vector<double> fused_prev, fused_curr;
      HostStepper<double> host_fused(NodalSum::fused);
      run(host_fused,
          model,
          bc,
          integration,
          n_steps,
          n_steps,
          fused_prev,
          fused_curr);
      checks.check(fused_prev == host_prev && fused_curr == host_curr,
                   name + ", double: the host's fused stepper bitwise equal "
                          "to its plan stepper");
      for (const unsigned int block : {32u, 64u, 128u, 256u})
        {
          std::vector<double>   again_prev, again_curr;
          DeviceStepper<double> first(NodalSum::fused, 300, block),
            second(NodalSum::fused, 300, block);
          run(first, model, bc, integration, n_steps, n_steps, prev, curr);
          run(second,
              model,
              bc,
              integration,
              n_steps,
              n_steps,
              again_prev,
              again_curr);
          checks.check(prev == fused_prev && curr == fused_curr,
                       name + ", double, fused, " + std::to_string(block) +
                         " nodes per block: GPU states bitwise equal to the "
                         "host's fused stepper (max difference " +
                         Testing::scientific(
                           Testing::max_relative_difference(curr, fused_curr)) +
                         ")");
          checks.check(again_prev == prev && again_curr == curr,
                       name + ", double, fused, " + std::to_string(block) +
                         " nodes per block: two runs bitwise equal");
        }
      checks.check_throws<dealii::ExceptionBase>(
        []() {
          DeviceStepper<double> bad(NodalSum::fused, 300, 100);
        },
        "multiple of 32",
        name + ": 100 nodes per block is refused");
    }

    {
      DeviceStepper<double> device(NodalSum::atomic, 300);
      run(device, model, bc, integration, n_steps, n_steps, prev, curr);
      const double difference =
        Testing::max_relative_difference(curr, host_curr);
      checks.check(difference < 1e-9,
                   name +
                     ", double, atomic nodal sum: within 1e-9 of the "
                     "host (" +
                     Testing::scientific(difference) + ")");
    }

    {
      std::vector<double> host_f_prev, host_f_curr;
      HostStepper<float>  host_f;
      run(host_f,
          model_f,
          bc,
          integration,
          n_steps,
          n_steps,
          host_f_prev,
          host_f_curr);
      for (const NodalSum sum : {NodalSum::fused, NodalSum::plan})
        {
          DeviceStepper<float> device(sum, 300);
          run(device, model_f, bc, integration, n_steps, n_steps, prev, curr);
          checks.check(
            curr == host_f_curr && prev == host_f_prev,
            name + ", float, " + (sum == NodalSum::plan ? "plan" : "fused") +
              ": GPU states bitwise equal to the host's "
              "float stepper (max difference " +
              Testing::scientific(
                Testing::max_relative_difference(curr, host_f_curr)) +
              ")");
        }
      const double drift = Testing::max_relative_difference(curr, host_curr);
      std::cout << "      " << name
                << ": float against double after 1000 steps: max |u_float - "
                   "u_double| / max |u_double| = "
                << Testing::scientific(drift) << std::endl;
      checks.check(drift < 1e-3,
                   name + ", float: within 1e-3 of double after 1000 steps (" +
                     Testing::scientific(drift) + ")");
    }
  }

  // The plan reads its element data evict-first (streams_element_data())
  // where the element forces and the nodal state fit in the device's L2 but
  // all of a step's data take more than half of it, as usual elsewhere. In
  // double a hexahedron's forces take 192 bytes, its element data 328 and a
  // node's state about 81: a cube of about 0.75 L2 streams, one whose forces
  // and state take 1.3 L2 and the 8^3 cube do not. In both of the first two
  // the plan's states are bitwise the host's.
  void
  check_element_data_loads(Testing::Checks &checks)
  {
    const Material      material    = Testing::truth_cube_material();
    const Mesh          small_mesh  = Testing::make_hexahedral_cube(8, 1.);
    const Model<double> small_model = make_model<double>(small_mesh, material);
    Integration         integration;
    integration.time_step = 0.5 * small_model.critical_time_step;
    DeviceStepper<double> small(NodalSum::plan, 300);
    small.reinit(small_model,
                 Testing::compression_conditions(small_mesh, 1., 0.1, 1.),
                 integration);
    checks.check(!small.streams_element_data(),
                 "8^3 cube: its data take little of L2, the plan reads the "
                 "element data as usual");

    const std::size_t l2 = GPUAssembly::get_device_info().l2_cache_bytes;
    for (const bool streamed : {true, false})
      {
        const unsigned int  n       = static_cast<unsigned int>(std::lround(
          std::cbrt(streamed ? 0.75 * l2 / 601. : 1.3 * l2 / 273.)));
        const unsigned int  n_steps = 100;
        const Mesh          mesh    = Testing::make_hexahedral_cube(n, 1., 0.2);
        const Model<double> model   = make_model<double>(mesh, material);
        integration.time_step       = 0.5 * model.critical_time_step;
        integration.damping         = 2.;
        const BoundaryConditions bc =
          Testing::compression_conditions(mesh,
                                          1.,
                                          0.1,
                                          300 * integration.time_step,
                                          0.01);
        std::vector<double> host_prev, host_curr, prev, curr;
        HostStepper<double> host;
        run(host,
            model,
            bc,
            integration,
            n_steps,
            n_steps,
            host_prev,
            host_curr);
        double moved = 0;
        for (const double x : host_curr)
          moved = std::max(moved, std::abs(x));
        DeviceStepper<double> device(NodalSum::plan, 300);
        run(device, model, bc, integration, n_steps, 75, prev, curr);
        const std::string name = std::to_string(n) + "^3 cube, L2 of " +
                                 std::to_string(l2 >> 20) + " MiB";
        checks.check(device.streams_element_data() == streamed,
                     name + (streamed ?
                               ": the plan reads the element data evict-first" :
                               ": its forces and state do not fit in L2, the "
                               "plan reads the element data as usual"));
        checks.check(moved > 1e-4 && prev == host_prev && curr == host_curr,
                     name +
                       ", double, plan: GPU states bitwise equal to the "
                       "host's after " +
                       std::to_string(n_steps) + " steps (max |u| " +
                       Testing::scientific(moved) + ", max difference " +
                       Testing::scientific(
                         Testing::max_relative_difference(curr, host_curr)) +
                       ")");
      }
  }
} // namespace

int
main()
{
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Testing::Checks checks;
  check_mesh(checks, Testing::make_hexahedral_cube(8, 1., 0.2), "hexahedra");
  check_element_data_loads(checks);
  {
    dealii::Triangulation<3> tria;
    dealii::GridGenerator::subdivided_hyper_rectangle_with_simplices(
      tria,
      {6, 6, 6},
      dealii::Point<3>(),
      dealii::Point<3>(1, 1, 1));
    check_mesh(checks, make_mesh(tria), "tetrahedra");
  }
  {
    // A step that is not finite: the GPU stops where the host stops, with
    // the same node and bitwise the same state, whatever the graph and
    // advance() sizes.
    HostStepper<double>          host;
    const Testing::NonFiniteStop reference =
      Testing::check_non_finite_stop(checks, host, 1000, "host");
    for (const unsigned int graph : {300u, 7u})
      for (const unsigned int chunk : {1000u, 5u})
        for (const NodalSum sum : {NodalSum::plan, NodalSum::atomic})
          {
            const std::string name =
              std::string("GPU, ") +
              (sum == NodalSum::plan ? "plan" : "atomic") + " nodal sum, " +
              std::to_string(graph) + " steps per graph, advance(" +
              std::to_string(chunk) + ")";
            DeviceStepper<double>        device(sum, graph);
            const Testing::NonFiniteStop stop =
              Testing::check_non_finite_stop(checks, device, chunk, name);
            // The atomic sum's last bits vary: check_non_finite_stop()'s
            // rules hold for it; the plan's stop is the host's, bitwise.
            if (sum == NodalSum::plan)
              checks.check(stop.step == reference.step &&
                             stop.node == reference.node &&
                             stop.u_previous == reference.u_previous &&
                             stop.u_current == reference.u_current,
                           name + ": stops at the host's step " +
                             std::to_string(reference.step) + " and node " +
                             std::to_string(reference.node) + " (got step " +
                             std::to_string(stop.step) + ", node " +
                             std::to_string(stop.node) +
                             "), with bitwise the host's state");
          }
  }
  return checks.exit_code();
}
