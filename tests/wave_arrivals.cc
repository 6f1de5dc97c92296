// SPDX-License-Identifier: LGPL-2.1-or-later
// Wave speeds of the explicit wave solver against elastic theory:
// - a P wave from a horizontal point force, along the force's axis in an
//   (absorbing) unbounded plate;
// - a Rayleigh wave from a vertical force on the free surface of a
//   half-plane.
// The speed is the distance between two receivers over the delay of their
// traces (cross-correlation, refined parabolically), so the source's own
// delay cancels.
//
// Tolerance: linear elements with lumped mass on a mesh of node spacing h
// propagate a wave of wavenumber k with a phase-speed error of about
// (kh)^2 / 24 (1D analysis, the time step only reduces it), and the
// envelope of a tone burst travels at the group speed, whose error is three
// times that. The delay is resolved to a fraction of the time step, which
// adds dt / delay; geometric near-field effects of a point source at two
// or more wavelengths add at most 0.5 %. The tolerance is the sum, 1.7 to
// 2.2 % here: small enough that the P, S and Rayleigh speeds (which differ
// by 7 % or more) cannot be confused.

#include <gpu_assembly/wave/wave_stepper.h>

#include <cmath>

#include "tests.h"
#include "wave_test_meshes.h"

using namespace GPUAssembly::Wave;

namespace
{
  constexpr double pi = 3.14159265358979323846;

  // Delay of b relative to a, in samples (parabolic refinement of the
  // maximum of the cross-correlation over non-negative lags).
  double
  delay_in_samples(const std::vector<double> &a, const std::vector<double> &b)
  {
    const int           n = a.size();
    std::vector<double> correlation(n, 0.);
    for (int lag = 0; lag < n; ++lag)
      for (int i = 0; i + lag < n; ++i)
        correlation[lag] += a[i] * b[i + lag];
    const int best =
      std::max_element(correlation.begin() + 1, correlation.end() - 1) -
      correlation.begin();
    const double left = correlation[best - 1], middle = correlation[best],
                 right = correlation[best + 1];
    return best + 0.5 * (left - right) / (left - 2 * middle + right);
  }

  struct Measurement
  {
    double speed     = 0;
    double tolerance = 0;
  };

  Measurement
  measure(const WaveMesh                     &mesh,
          const std::vector<ElasticMaterial> &materials,
          const Source                       &source,
          const std::array<double, 4>        &receivers, // x1 y1 x2 y2
          const unsigned int                  component,
          const double                        end_time,
          const double                        wavelength,
          const double                        node_spacing)
  {
    const NodalSystem system = assemble_nodal_system(mesh, materials);
    const double dt_stable   = 2. / std::sqrt(system.estimate_max_eigenvalue());
    const double dt          = 0.8 * dt_stable;
    const unsigned int        n_steps = std::ceil(end_time / dt);
    std::vector<unsigned int> offsets, neighbours;
    make_node_graph(system, offsets, neighbours);
    BlockLimits limits;
    limits.max_block_size   = 256;
    limits.max_halo_nodes   = 256;
    const NodeBlocks blocks = partition_nodes(PartitionerType::aligned,
                                              mesh,
                                              offsets,
                                              neighbours,
                                              limits);
    const std::vector<unsigned int> receiver_nodes = {
      mesh.nearest_node(receivers[0], receivers[1]),
      mesh.nearest_node(receivers[2], receivers[3])};
    const double distance =
      std::hypot(mesh.coordinates[2 * receiver_nodes[1]] -
                   mesh.coordinates[2 * receiver_nodes[0]],
                 mesh.coordinates[2 * receiver_nodes[1] + 1] -
                   mesh.coordinates[2 * receiver_nodes[0] + 1]);
    const Plan<double>  plan = make_plan<double>(system,
                                                blocks,
                                                dt,
                                                dt_stable,
                                                {source},
                                                receiver_nodes,
                                                n_steps);
    HostStepper<double> stepper;
    stepper.reinit(plan, 1);
    stepper.advance(n_steps);
    std::vector<double> a, b;
    for (unsigned int r = 0; r < n_steps; ++r)
      {
        a.push_back(stepper.receiver_history()[(2 * r) * 2 + component]);
        b.push_back(stepper.receiver_history()[(2 * r + 1) * 2 + component]);
      }
    const double delay = delay_in_samples(a, b) * dt;
    const double kh    = 2 * pi * node_spacing / wavelength;
    Measurement  result;
    result.speed     = distance / delay;
    result.tolerance = 3 * kh * kh / 24 + dt / delay + 0.005;
    return result;
  }
} // namespace

int
main()
{
  Testing::Checks       checks;
  const ElasticMaterial steel{210e9, 0.3, 7850, 0};
  const double          c_p = steel.p_wave_speed(), c_s = steel.s_wave_speed(),
               c_r = steel.rayleigh_wave_speed();
  std::cout << "      theory: c_p = " << c_p << " m/s, c_s = " << c_s
            << " m/s, c_R = " << c_r << " m/s" << std::endl;
  const double frequency = 1e5;
  // 24 nodes per wavelength of the wave measured: quadrilaterals of
  // lambda / 12, each split into triangles of half that spacing.
  const unsigned int per_wavelength = 12;

  // The arrival on @p tria with absorbing @p layers of 3 cycles pushed at
  // the origin in the direction (@p dx, @p dy); the speed measured is
  // checked against @p theory, named @p wave.
  const auto measure_speed = [&](const std::string                 &wave,
                                 const double                       theory,
                                 const dealii::Triangulation<2>    &tria,
                                 const std::vector<AbsorbingLayer> &layers,
                                 const double                       dx,
                                 const double                       dy,
                                 const std::array<double, 4>       &receivers,
                                 const unsigned int                 component,
                                 const double                       end_time,
                                 const double                       lambda) {
    WaveDiscretization discretization;
    discretization.reinit(tria, {{0, 0}});
    WaveMesh mesh = discretization.get_mesh();
    apply_absorbing_layers(layers, mesh);
    Source source;
    source.nodes            = {mesh.nearest_node(0, 0)};
    source.direction[0]     = dx;
    source.direction[1]     = dy;
    source.signal.frequency = frequency;
    source.signal.n_cycles  = 3;
    const Measurement m     = measure(mesh,
                                  {steel},
                                  source,
                                  receivers,
                                  component,
                                  end_time,
                                  lambda,
                                  lambda / per_wavelength / 2);
    checks.check(std::abs(m.speed / theory - 1) < m.tolerance,
                 wave + ": measured " + std::to_string(m.speed) +
                   " m/s, theory " + std::to_string(theory) +
                   " m/s, relative difference " +
                   Testing::scientific(std::abs(m.speed / theory - 1)) +
                   " < tolerance " + Testing::scientific(m.tolerance));
    return m;
  };

  {
    const double             lambda = c_p / frequency, L = 8 * lambda;
    const unsigned int       n = std::lround(2 * L / lambda * per_wavelength);
    dealii::Triangulation<2> tria;
    Testing::make_rectangle(-L, -L, L, L, n, n, true, tria);
    std::vector<AbsorbingLayer> layers;
    for (const auto side : {AbsorbingLayer::Side::left,
                            AbsorbingLayer::Side::right,
                            AbsorbingLayer::Side::bottom,
                            AbsorbingLayer::Side::top})
      layers.push_back({side, 2 * lambda, 4 * pi * frequency});
    const Measurement p = measure_speed("P wave",
                                        c_p,
                                        tria,
                                        layers,
                                        1,
                                        0,
                                        {{2 * lambda, 0, 5 * lambda, 0}},
                                        0,
                                        (5 * lambda + 3.5 * lambda) / c_p,
                                        lambda);
    checks.check(p.tolerance < 1 - c_s / c_p,
                 "P-wave tolerance separates P from S waves");
  }
  {
    const double lambda = c_r / frequency;
    const double x0 = -4 * lambda, x1 = 13 * lambda, depth = 6 * lambda;
    dealii::Triangulation<2> tria;
    Testing::make_rectangle(x0,
                            -depth,
                            x1,
                            0,
                            std::lround((x1 - x0) / lambda * per_wavelength),
                            std::lround(depth / lambda * per_wavelength),
                            true,
                            tria);
    const Measurement r = measure_speed(
      "Rayleigh wave",
      c_r,
      tria,
      {{AbsorbingLayer::Side::left, 2.5 * lambda, 4 * pi * frequency},
       {AbsorbingLayer::Side::right, 2.5 * lambda, 4 * pi * frequency},
       {AbsorbingLayer::Side::bottom, 2.5 * lambda, 4 * pi * frequency}},
      0,
      -1,
      {{3 * lambda, 0, 7 * lambda, 0}},
      1,
      (7 * lambda + 3.5 * lambda) / c_r,
      lambda);
    checks.check(r.tolerance < c_s / c_r - 1,
                 "Rayleigh tolerance separates Rayleigh from S waves");
  }
  return checks.exit_code();
}
