// SPDX-License-Identifier: LGPL-2.1-or-later
// The resident backend's follower-pressure entries on the GPU
// (DevicePressureEntries) against the host path's arithmetic: the pressure
// faces of a bar with hanging nodes, at a displacement
// field that is not zero, with the scales of a dynamic step. Every entry is
// weighed and scaled as the host path does it (force_scale * weight *
// force, -stiffness_scale * weight * dforce/du), a third of them are
// treated as rows of another rank: they must come back from compute()
// equal to the host's values, and, fed back as received values, be summed
// after the rank's own entries in their order. The residual and the matrix
// values must equal the host's to 1e-13 of their largest entry (the face
// arithmetic is the host's, compiled without fused multiply-add on both
// sides; the check prints whether they are bitwise equal), and two GPU runs
// must be bitwise equal.

#include <deal.II/base/numbers.h>

#include <gpu_assembly/lac/device_vector.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <vector>

#include "../surface_load_problems.h"
#include "../tests.h"
#include "gpu_tests.h"
#include "resident_pressure_device.h"

namespace
{
  using namespace Testing;

  constexpr double pressure        = 0.7;
  constexpr double force_scale     = 0.05;
  constexpr double stiffness_scale = 0.025;

  /// The largest |a - b| and the largest |a|.
  std::pair<double, double>
  difference(const std::vector<double> &a, const std::vector<double> &b)
  {
    double d = a.size() == b.size() ? 0. : 1e300, size = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
      {
        d    = std::max(d, std::abs(a[i] - b[i]));
        size = std::max(size, std::abs(a[i]));
      }
    return {d, size};
  }

  /// The sums of one destination (residual rows or matrix positions):
  /// each target's places in the order they are added.
  struct SumPlan
  {
    std::map<int, unsigned int>   index;
    std::vector<int>              targets;
    std::vector<std::vector<int>> places;

    void
    add(const int target, const int place)
    {
      const auto [entry, inserted] = index.emplace(target, targets.size());
      if (inserted)
        {
          targets.push_back(target);
          places.emplace_back();
        }
      places[entry->second].push_back(place);
    }

    OrderedSums
    ordered() const
    {
      OrderedSums sums;
      sums.targets = targets;
      for (const std::vector<int> &p : places)
        {
          sums.sources.insert(sums.sources.end(), p.begin(), p.end());
          sums.offsets.push_back(static_cast<int>(sums.sources.size()));
        }
      return sums;
    }

    /// out[target] += the values at the places, added from 0 in order.
    void
    add_to(const std::vector<double> &values, std::vector<double> &out) const
    {
      for (std::size_t t = 0; t < targets.size(); ++t)
        {
          double sum = 0;
          for (const int place : places[t])
            sum += values[place];
          out[targets[t]] += sum;
        }
    }
  };
} // namespace



int
main()
{
  if (!cuda_device_present())
    return no_device_exit_code();
  Checks checks;

  // A bar whose height grows with x y (faces that are not rectangles),
  // its corner cell refined (hanging nodes on the pressure face y = 0).
  Triangulation<3> triangulation;
  GridGenerator::subdivided_hyper_rectangle(triangulation,
                                            {3, 2, 2},
                                            Point<3>(0, 0, 0),
                                            Point<3>(2, 1, 1));
  GridTools::transform(
    [](const Point<3> &p) {
      return Point<3>(p[0], p[1], p[2] * (1 + 0.2 * p[0] * p[1]));
    },
    triangulation);
  triangulation.begin_active()->set_refine_flag();
  triangulation.execute_coarsening_and_refinement();
  Problem problem(triangulation, {{0, 0.}});
  {
    const BoundaryFaces end  = problem.faces_where([](const Point<3> &p) {
      return p[0] > 2 - 1e-12;
    });
    const BoundaryFaces side = problem.faces_where([](const Point<3> &p) {
      return p[1] < 1e-12;
    });
    BoundaryFaces       both = side;
    both.insert(both.end(), end.begin(), end.end());
    problem.set_surface_loads({}, Tensor<1, 3>(), both);
  }
  const SurfaceLoadData &faces  = problem.data.surface_loads;
  const unsigned int     n_dofs = problem.data.arrays->n_dofs;
  checks.check(faces.n_pressure_faces > 8 && !faces.stiffness_local_i.empty(),
               "the bar has pressure faces with load stiffness (" +
                 std::to_string(faces.n_pressure_faces) + " faces)");

  std::vector<double> u(n_dofs);
  for (unsigned int i = 0; i < n_dofs; ++i)
    u[i] = 0.05 * std::sin(1.3 * i);

  // The host path's entry values, at their places (force entry k at k,
  // stiffness entry k at n_force + k), visited in its order; every third
  // entry visited belongs to another rank: it is sent, and comes back as a
  // received value after the entries.
  const int           n_force   = faces.force_local.size();
  const int           n_entries = n_force + faces.stiffness_local_i.size();
  std::vector<double> values(n_entries);
  std::vector<int>    sent;
  SumPlan             forces, stiffness;
  unsigned int        visited = 0;
  const auto visit = [&](const int place, const int target, SumPlan &plan) {
    if (visited++ % 3 == 1)
      sent.push_back(place);
    else
      plan.add(target, place);
  };
  for_each_pressure_entry(
    faces,
    u.data(),
    pressure,
    [&](const unsigned int k, const double force) {
      values[k] = force_scale * faces.force_weights[k] * force;
      visit(k, faces.force_rows[k], forces);
    },
    [&](const unsigned int k, const double derivative) {
      values[n_force + k] =
        -stiffness_scale * faces.stiffness_weights[k] * derivative;
      visit(n_force + k, faces.stiffness_positions[k], stiffness);
    });
  std::vector<double> sent_host;
  for (std::size_t m = 0; m < sent.size(); ++m)
    {
      sent_host.push_back(values[sent[m]]);
      values.push_back(values[sent[m]]);
      const int place = sent[m];
      if (place < n_force)
        forces.add(faces.force_rows[place], n_entries + m);
      else
        stiffness.add(faces.stiffness_positions[place - n_force],
                      n_entries + m);
    }
  // Destinations that hold values already.
  std::vector<double> residual(n_dofs),
    matrix(problem.data.arrays->column_indices.size());
  for (std::size_t i = 0; i < residual.size(); ++i)
    residual[i] = std::cos(0.7 * i);
  for (std::size_t i = 0; i < matrix.size(); ++i)
    matrix[i] = 1. + std::sin(0.3 * i);
  std::vector<double> residual_host = residual, matrix_host = matrix;
  forces.add_to(values, residual_host);
  stiffness.add_to(values, matrix_host);

  const auto gpu_run = [&]() {
    GPUAssembly::DeviceVector<double> u_device, residual_device, matrix_device;
    u_device.copy_from_host(u);
    residual_device.copy_from_host(residual);
    matrix_device.copy_from_host(matrix);
    DevicePressureEntries entries(faces,
                                  sent,
                                  forces.ordered(),
                                  stiffness.ordered(),
                                  sent.size());
    std::vector<double>   sent_values;
    entries.compute(u_device.data(),
                    pressure,
                    force_scale,
                    stiffness_scale,
                    sent_values);
    entries.add(sent_values, residual_device.data(), matrix_device.data());
    return std::array<std::vector<double>, 3>{sent_values,
                                              residual_device.to_host(),
                                              matrix_device.to_host()};
  };
  const auto gpu = gpu_run();

  const char                *names[] = {"the entries sent to other ranks",
                                        "the residual",
                                        "the matrix values"};
  const std::vector<double> *host[]  = {&sent_host,
                                        &residual_host,
                                        &matrix_host};
  for (unsigned int i = 0; i < 3; ++i)
    {
      const auto [d, size] = difference(*host[i], gpu[i]);
      std::cout << names[i] << ": largest |gpu - host| " << scientific(d)
                << " of largest " << scientific(size)
                << (gpu[i] == *host[i] ? ", bitwise equal" : "") << std::endl;
      checks.check(gpu[i].size() == host[i]->size() && d <= 1e-13 * size,
                   names[i] +
                     std::string(" on the GPU equal the host "
                                 "path's to 1e-13 of the largest "
                                 "entry (difference ") +
                     scientific(d) + ")");
    }
  checks.check(!sent.empty() && forces.targets.size() > 0 &&
                 stiffness.targets.size() > 0,
               "entries are sent, and the rank has sums of its own");
  checks.check(gpu_run() == gpu, "two GPU runs are bitwise equal");
  return checks.exit_code();
}
