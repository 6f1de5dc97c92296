// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_device_constraints_h
#define gpu_assembly_lac_device_constraints_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/base/config.h>
#include <gpu_assembly/lac/device_vector.h>

#include <cstddef>
#include <vector>

struct CUstream_st;

namespace GPUAssembly
{
  /**
   * Every constrained DoF of a MeshArrays with its line, in one flat form
   * for host and device: constrained DoF k is dofs[k], with
   * x = sum_j weights[j] x[entry_dofs[j]] + inhomogeneities[k] over j in
   * [entry_offsets[k], entry_offsets[k + 1]) (no entries for Dirichlet
   * lines). The constraints are closed, so no entry is itself constrained
   * and the lines can be applied in any order, in parallel.
   */
  struct ConstraintLines
  {
    std::vector<index_type> dofs;
    std::vector<index_type> entry_offsets;
    std::vector<index_type> entry_dofs;
    std::vector<double>     weights;
    std::vector<double>     inhomogeneities;

    explicit ConstraintLines(const MeshArrays &arrays);

    std::size_t
    size() const
    {
      return dofs.size();
    }
  };



  namespace internal
  {
    /// The value line @p k of a ConstraintLines gives its DoF.
    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    constrained_value(const unsigned int k,
                      const index_type  *entry_offsets,
                      const index_type  *entry_dofs,
                      const Number      *weights,
                      const Number      *inhomogeneities,
                      const Number      *x)
    {
      Number value = 0;
      for (index_type j = entry_offsets[k]; j < entry_offsets[k + 1]; ++j)
        value += weights[j] * x[entry_dofs[j]];
      return value + inhomogeneities[k];
    }
  } // namespace internal



  /**
   * AffineConstraints::distribute() on the host, with the device's
   * arithmetic: set every constrained entry of @p x from its line.
   */
  template <typename Number>
  void
  distribute_constraints(const ConstraintLines &lines,
                         Number                *x,
                         std::size_t            size);

  template <typename Number>
  void
  distribute_constraints(const ConstraintLines &lines, std::vector<Number> &x)
  {
    distribute_constraints(lines, x.data(), x.size());
  }



  /**
   * The constraints of a MeshArrays on the device, for solvers that run
   * there: distribute() after a solve sets the hanging-node, periodic and
   * Dirichlet entries from their lines (AffineConstraints::distribute()),
   * set_zero() zeroes the constrained entries (of a residual or an update
   * that must satisfy homogeneous constraints). No host round trip.
   */
  template <typename Number>
  class DeviceConstraints
  {
  public:
    DeviceConstraints() = default;

    explicit DeviceConstraints(const MeshArrays &arrays);

    void
    reinit(const MeshArrays &arrays);

    /// x_i = sum_j w_ij x_j + g_i for every constrained DoF i.
    void
    distribute(DeviceVector<Number> &x, CUstream_st *stream = nullptr) const;

    /// x_i = 0 for every constrained DoF i.
    void
    set_zero(DeviceVector<Number> &x, CUstream_st *stream = nullptr) const;

    /// Number of constrained DoFs.
    std::size_t
    n_constraints() const
    {
      return n_lines;
    }

    std::size_t
    memory_consumption() const;

  private:
    std::size_t          n_lines = 0;
    std::size_t          n_dofs  = 0;
    DeviceVector<int>    dofs;
    DeviceVector<int>    entry_offsets;
    DeviceVector<int>    entry_dofs;
    DeviceVector<Number> weights;
    DeviceVector<Number> inhomogeneities;
  };
} // namespace GPUAssembly

#endif
