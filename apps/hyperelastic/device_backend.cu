// The device backend of the hyperelastic time integrator: assembly through
// the plugin's DeviceAssembler, Jacobi-CG through DeviceJacobiCG, and the
// Newton and time updates as element-wise kernels. Within a step nothing
// but the residual norms (one double per Newton and CG iteration) crosses
// to the host.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/kernels/neo_hookean.h>
#include <gpu_assembly/lac/block_sum.cuh>
#include <gpu_assembly/lac/device_solver.h>

#include <cuda_runtime.h>

#include <cmath>

#include "integrator_backend.h"

namespace Hyperelastic
{
  namespace
  {
    constexpr int dim        = 3;
    constexpr int block_size = 256;

    unsigned int
    n_blocks(const std::size_t n)
    {
      return static_cast<unsigned int>((n + block_size - 1) / block_size);
    }

    template <typename T>
    std::vector<T>
    convert(const std::vector<double> &values)
    {
      return std::vector<T>(values.begin(), values.end());
    }

    // Nodal data of the element kernel: the midpoint displacement
    // (u + u_k)/2 (dynamic) or u (quasi-static), plus X if the kernel reads
    // positions. Gathers from DoF order into node-major order.
    template <typename Number>
    __global__ void
    gather_nodal_data(const Number      *u,
                      const Number      *u_old,
                      const int         *node_dofs,
                      const Number      *reference_positions,
                      const unsigned int n_values,
                      const bool         midpoint,
                      Number            *nodal_data)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i >= n_values)
        return;
      const int dof   = node_dofs[i];
      Number    value = midpoint ? Number(0.5) * (u[dof] + u_old[dof]) : u[dof];
      if (reference_positions != nullptr)
        value += reference_positions[i];
      nodal_data[i] = value;
    }

    // The rest of an assembly in one pass over the DoFs: the residual of
    // eq. (4), r = p_k - m (u - u_k)/dt - dt/2 f(u_mid), where the assembled
    // vector holds dt/2 (f_int - f_body) and the nodal load enters f with a
    // minus sign (quasi-static, dt = 0: r = f_ext - f_int); m/dt added to
    // the diagonal of the tangent (the lumped mass term of eq. (6)) and its
    // inverse stored for the Jacobi preconditioner; and the block sums of
    // r.r for the residual norm. One kernel instead of three: at the
    // hand-model size each is a few microseconds of launch and drain.
    template <typename Number>
    __global__ void
    residual_kernel(const Number        *assembled,
                    const Number        *u,
                    const Number        *u_old,
                    const Number        *p_old,
                    const Number        *mass,
                    const Number        *load_pattern,
                    const unsigned char *constrained,
                    const int           *diagonal_index,
                    const unsigned int   n,
                    const Number         dt,
                    const Number         load_factor,
                    Number              *r,
                    Number              *values,
                    Number              *inverse_diagonal,
                    double              *partial)
    {
      double rr[1] = {0.};
      for (unsigned int i = blockIdx.x * block_size + threadIdx.x; i < n;
           i += gridDim.x * block_size)
        {
          Number value = load_factor * load_pattern[i] - assembled[i];
          if (dt > Number(0))
            value += p_old[i] - mass[i] * (u[i] - u_old[i]) / dt;
          value = constrained[i] ? Number(0) : value;
          r[i]  = value;
          rr[0] += double(value) * double(value);

          Number diagonal = values[diagonal_index[i]];
          if (dt > Number(0))
            {
              diagonal += mass[i] / dt;
              values[diagonal_index[i]] = diagonal;
            }
          inverse_diagonal[i] = Number(1) / diagonal;
        }

      GPUAssembly::internal::block_sum<block_size>(rr);
      if (threadIdx.x == 0)
        partial[blockIdx.x] = rr[0];
    }



    template <typename Number>
    __global__ void
    add_kernel(Number *u, const Number *delta, const unsigned int n)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i < n)
        u[i] += delta[i];
    }

    // First Newton iterate u = u_k + dt p_k / m.
    template <typename Number>
    __global__ void
    predict_kernel(const Number      *u_old,
                   const Number      *p_old,
                   const Number      *mass,
                   const unsigned int n,
                   const Number       dt,
                   Number            *u)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i < n)
        u[i] = u_old[i] + dt * p_old[i] / mass[i];
    }

    // Eq. (5) written with eq. (4): p_{k+1} = 2 m (u - u_k)/dt - p_k; then
    // the new step's old state.
    template <typename Number>
    __global__ void
    finish_kernel(const Number      *u,
                  const Number      *mass,
                  const unsigned int n,
                  const Number       dt,
                  Number            *u_old,
                  Number            *p_old)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i >= n)
        return;
      if (dt > Number(0))
        p_old[i] = Number(2) * mass[i] * (u[i] - u_old[i]) / dt - p_old[i];
      u_old[i] = u[i];
    }



    template <typename Number>
    class DeviceBackend : public IntegratorBackend
    {
    public:
      explicit DeviceBackend(const BackendData &data);

      void
      set_state(const std::vector<double> &u,
                const std::vector<double> &p) override;

      void
      get_state(std::vector<double> &u, std::vector<double> &p) const override;

      void
      get_iterate(std::vector<double> &u) const override;

      void
      predict(const StepLoads &loads) override;

      double
      assemble_residual(const StepLoads &loads) override;

      LinearSolveResult
      solve_and_update(const double       relative_tolerance,
                       const unsigned int max_iterations) override;

      void
      finish_step(const StepLoads &loads) override;

      std::size_t
      memory_consumption() const override;

      std::string
      description() const override;

    private:
      void
      check_launch() const
      {
        GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
      }

      const BackendData                        &data;
      const unsigned int                        n_dofs;
      GPUAssembly::DeviceAssembler<dim, Number> assembler;
      GPUAssembly::DeviceCSRMatrix<Number>      matrix;
      GPUAssembly::DeviceJacobiCG<Number>       cg;
      GPUAssembly::DeviceReduction<Number>      reduction;
      GPUAssembly::DeviceVector<Number>         u, u_old, p_old;
      GPUAssembly::DeviceVector<Number>         nodal_data;
      GPUAssembly::DeviceVector<Number>         assembled, residual;
      GPUAssembly::DeviceVector<Number>         delta, inverse_diagonal;
      GPUAssembly::DeviceVector<Number>         mass, load_pattern;
      GPUAssembly::DeviceVector<Number>         reference_positions;
      GPUAssembly::DeviceVector<int>            node_dofs;
      GPUAssembly::DeviceVector<int>            diagonal_index;
      GPUAssembly::DeviceVector<unsigned char>  constrained;
    };



    template <typename Number>
    DeviceBackend<Number>::DeviceBackend(const BackendData &data)
      : data(data)
      , n_dofs(data.arrays->n_dofs)
      , u(n_dofs)
      , u_old(n_dofs)
      , p_old(n_dofs)
      , nodal_data(std::size_t(data.arrays->n_nodes) * dim)
      , assembled(n_dofs)
      , residual(n_dofs)
      , delta(n_dofs)
      , inverse_diagonal(n_dofs)
      , mass(convert<Number>(data.lumped_mass))
      , load_pattern(convert<Number>(data.load_pattern))
      , node_dofs(data.arrays->node_dofs)
      , diagonal_index(data.diagonal_index)
      , constrained(
          std::vector<unsigned char>(data.arrays->dof_is_constrained.begin(),
                                     data.arrays->dof_is_constrained.end()))
    {
      typename GPUAssembly::DeviceAssembler<dim, Number>::AdditionalData
        additional_data;
      additional_data.method =
        GPUAssembly::parse_assembly_method(data.assembly_method);
      additional_data.global_nz.symmetric = data.symmetric_element_data;
      additional_data.n_nodal_fields      = dim;
      assembler.reinit(*data.arrays, additional_data);
      matrix.reinit(*data.arrays);
      if (data.nodal_data_are_positions)
        reference_positions.copy_from_host(
          convert<Number>(data.arrays->nodal_coordinates));
    }



    template <typename Number>
    void
    DeviceBackend<Number>::set_state(const std::vector<double> &u_host,
                                     const std::vector<double> &p_host)
    {
      u_old.copy_from_host(convert<Number>(u_host));
      p_old.copy_from_host(convert<Number>(p_host));
      u.copy_from_host(convert<Number>(u_host));
    }



    template <typename Number>
    void
    DeviceBackend<Number>::get_state(std::vector<double> &u_host,
                                     std::vector<double> &p_host) const
    {
      const std::vector<Number> u_values = u_old.to_host();
      const std::vector<Number> p_values = p_old.to_host();
      u_host.assign(u_values.begin(), u_values.end());
      p_host.assign(p_values.begin(), p_values.end());
    }



    template <typename Number>
    void
    DeviceBackend<Number>::get_iterate(std::vector<double> &u_host) const
    {
      const std::vector<Number> values = u.to_host();
      u_host.assign(values.begin(), values.end());
    }



    template <typename Number>
    void
    DeviceBackend<Number>::predict(const StepLoads &loads)
    {
      if (loads.dt > 0)
        predict_kernel<<<n_blocks(n_dofs), block_size>>>(u_old.data(),
                                                         p_old.data(),
                                                         mass.data(),
                                                         n_dofs,
                                                         Number(loads.dt),
                                                         u.data());
      else
        GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(u.data(),
                                           u_old.data(),
                                           n_dofs * sizeof(Number),
                                           cudaMemcpyDeviceToDevice));
      check_launch();
    }



    template <typename Number>
    double
    DeviceBackend<Number>::assemble_residual(const StepLoads &loads)
    {
      const bool         dynamic  = loads.dt > 0;
      const unsigned int n_values = nodal_data.size();
      gather_nodal_data<<<n_blocks(n_values), block_size>>>(
        u.data(),
        u_old.data(),
        node_dofs.data(),
        data.nodal_data_are_positions ? reference_positions.data() : nullptr,
        n_values,
        dynamic,
        nodal_data.data());
      check_launch();

      const auto kernel = make_step_kernel<Number>(data, loads);
      assembler.assemble(kernel, nodal_data, matrix, assembled);

      const double factor = load_factor(loads);
      using Reduction     = GPUAssembly::DeviceReduction<Number>;
      static_assert(Reduction::block_size == block_size);
      const unsigned int blocks = Reduction::n_blocks(n_dofs);
      residual_kernel<<<blocks, block_size>>>(assembled.data(),
                                              u.data(),
                                              u_old.data(),
                                              p_old.data(),
                                              mass.data(),
                                              load_pattern.data(),
                                              constrained.data(),
                                              diagonal_index.data(),
                                              n_dofs,
                                              Number(loads.dt),
                                              Number(factor),
                                              residual.data(),
                                              matrix.get_values().data(),
                                              inverse_diagonal.data(),
                                              reduction.partial_sums());
      check_launch();
      constexpr unsigned int slot = Reduction::n_slots - 1;
      reduction.finish(blocks, 1, slot, slot);
      double rr = 0;
      reduction.read_slots(slot, 1, &rr);
      return std::sqrt(rr);
    }



    template <typename Number>
    LinearSolveResult
    DeviceBackend<Number>::solve_and_update(const double relative_tolerance,
                                            const unsigned int max_iterations)
    {
      typename GPUAssembly::DeviceJacobiCG<Number>::Control control;
      control.relative_tolerance = relative_tolerance;
      control.max_iterations     = max_iterations;
      const auto result =
        cg.solve(matrix, inverse_diagonal, delta, residual, control);
      add_kernel<<<n_blocks(n_dofs), block_size>>>(u.data(),
                                                   delta.data(),
                                                   n_dofs);
      check_launch();
      return {result.iterations,
              result.initial_residual,
              result.final_residual,
              result.converged};
    }



    template <typename Number>
    void
    DeviceBackend<Number>::finish_step(const StepLoads &loads)
    {
      finish_kernel<<<n_blocks(n_dofs), block_size>>>(u.data(),
                                                      mass.data(),
                                                      n_dofs,
                                                      Number(loads.dt),
                                                      u_old.data(),
                                                      p_old.data());
      check_launch();
      // Timers around this call see the work done, not just enqueued.
      GPU_ASSEMBLY_CHECK_CUDA(cudaDeviceSynchronize());
    }



    template <typename Number>
    std::size_t
    DeviceBackend<Number>::memory_consumption() const
    {
      std::size_t bytes =
        assembler.device_memory_consumption() + matrix.memory_consumption();
      for (const auto *v : {&u,
                            &u_old,
                            &p_old,
                            &nodal_data,
                            &assembled,
                            &residual,
                            &delta,
                            &inverse_diagonal,
                            &mass,
                            &load_pattern,
                            &reference_positions})
        bytes += v->memory_consumption();
      // CG work vectors r, z, p, q.
      bytes += 4 * n_dofs * sizeof(Number);
      return bytes + node_dofs.memory_consumption() +
             diagonal_index.memory_consumption() +
             constrained.memory_consumption();
    }



    template <typename Number>
    std::string
    DeviceBackend<Number>::description() const
    {
      return "GPU: " + data.assembly_method +
             (data.symmetric_element_data &&
                  data.assembly_method == "GlobalNZ" ?
                " (symmetric element data)" :
                "") +
             " assembly, Jacobi-CG and updates on the device in " +
             (sizeof(Number) == 8 ? "double" : "single") + " precision";
    }
  } // namespace



  template <typename Number>
  std::unique_ptr<IntegratorBackend>
  make_device_backend(const BackendData &data)
  {
    return std::make_unique<DeviceBackend<Number>>(data);
  }

  template std::unique_ptr<IntegratorBackend>
  make_device_backend<float>(const BackendData &);
  template std::unique_ptr<IntegratorBackend>
  make_device_backend<double>(const BackendData &);
} // namespace Hyperelastic
