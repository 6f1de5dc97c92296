#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/lac/device_solver.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

namespace GPUAssembly
{
  namespace
  {
    constexpr unsigned int block_size = DeviceReduction<double>::block_size;

    // Tree sum of n_sums interleaved per-thread values over one block;
    // thread 0 writes the block's sums to out[blockIdx.x * n_sums + s].
    template <unsigned int n_sums>
    __device__ void
    block_sums(double (&value)[n_sums], double *out)
    {
      __shared__ double buffer[n_sums][block_size];
      for (unsigned int s = 0; s < n_sums; ++s)
        buffer[s][threadIdx.x] = value[s];
      __syncthreads();
      for (unsigned int stride = block_size / 2; stride > 0; stride /= 2)
        {
          if (threadIdx.x < stride)
            for (unsigned int s = 0; s < n_sums; ++s)
              buffer[s][threadIdx.x] += buffer[s][threadIdx.x + stride];
          __syncthreads();
        }
      if (threadIdx.x == 0)
        for (unsigned int s = 0; s < n_sums; ++s)
          out[blockIdx.x * n_sums + s] = buffer[s][0];
    }



    template <typename Number>
    __global__ void
    dot_kernel(const Number     *x,
               const Number     *y,
               const std::size_t n,
               double           *partial)
    {
      double sum[1] = {0.};
      for (std::size_t i = blockIdx.x * std::size_t(block_size) + threadIdx.x;
           i < n;
           i += std::size_t(gridDim.x) * block_size)
        sum[0] += double(x[i]) * double(y[i]);
      block_sums<1>(sum, partial);
    }



    // One block: sum over blocks of partial sum s into slot_0 (s = 0) or
    // slot_1 (s = 1).
    __global__ void
    finish_kernel(const double      *partial,
                  const unsigned int n_blocks,
                  const unsigned int n_sums,
                  double            *slots,
                  const unsigned int slot_0,
                  const unsigned int slot_1)
    {
      for (unsigned int s = 0; s < n_sums; ++s)
        {
          double value[1] = {0.};
          for (unsigned int b = threadIdx.x; b < n_blocks; b += block_size)
            value[0] += partial[b * n_sums + s];
          __shared__ double buffer[block_size];
          buffer[threadIdx.x] = value[0];
          __syncthreads();
          for (unsigned int stride = block_size / 2; stride > 0; stride /= 2)
            {
              if (threadIdx.x < stride)
                buffer[threadIdx.x] += buffer[threadIdx.x + stride];
              __syncthreads();
            }
          if (threadIdx.x == 0)
            slots[s == 0 ? slot_0 : slot_1] = buffer[0];
          __syncthreads();
        }
    }



    // Slots used by the CG: alpha's denominator p.q, and (r.z, r.r) for the
    // two parities of the iteration so that beta reads old and new r.z.
    constexpr unsigned int slot_pq = 0;
    constexpr unsigned int slot_rz = 1; // 1, 2: r.z of parity 0, 1
    constexpr unsigned int slot_rr = 3;

    // r = b, z = D^{-1} r, p = z, x = 0; partial sums of r.z and r.r.
    template <typename Number>
    __global__ void
    cg_start(const Number     *b,
             const Number     *inverse_diagonal,
             Number           *x,
             Number           *r,
             Number           *z,
             Number           *p,
             const std::size_t n,
             double           *partial)
    {
      double sums[2] = {0., 0.};
      for (std::size_t i = blockIdx.x * std::size_t(block_size) + threadIdx.x;
           i < n;
           i += std::size_t(gridDim.x) * block_size)
        {
          const Number ri = b[i];
          const Number zi = inverse_diagonal[i] * ri;
          x[i]            = 0;
          r[i]            = ri;
          z[i]            = zi;
          p[i]            = zi;
          sums[0] += double(ri) * double(zi);
          sums[1] += double(ri) * double(ri);
        }
      block_sums<2>(sums, partial);
    }



    // alpha = (r.z)_old / p.q; x += alpha p; r -= alpha q; z = D^{-1} r;
    // partial sums of the new r.z and r.r.
    template <typename Number>
    __global__ void
    cg_update(const Number      *p,
              const Number      *q,
              const Number      *inverse_diagonal,
              Number            *x,
              Number            *r,
              Number            *z,
              const std::size_t  n,
              const double      *slots,
              const unsigned int parity,
              double            *partial)
    {
      const Number alpha   = Number(slots[slot_rz + parity] / slots[slot_pq]);
      double       sums[2] = {0., 0.};
      for (std::size_t i = blockIdx.x * std::size_t(block_size) + threadIdx.x;
           i < n;
           i += std::size_t(gridDim.x) * block_size)
        {
          x[i] += alpha * p[i];
          const Number ri = r[i] - alpha * q[i];
          const Number zi = inverse_diagonal[i] * ri;
          r[i]            = ri;
          z[i]            = zi;
          sums[0] += double(ri) * double(zi);
          sums[1] += double(ri) * double(ri);
        }
      block_sums<2>(sums, partial);
    }



    // beta = (r.z)_new / (r.z)_old; p = z + beta p.
    template <typename Number>
    __global__ void
    cg_direction(const Number      *z,
                 Number            *p,
                 const std::size_t  n,
                 const double      *slots,
                 const unsigned int parity)
    {
      const Number beta =
        Number(slots[slot_rz + 1 - parity] / slots[slot_rz + parity]);
      for (std::size_t i = blockIdx.x * std::size_t(block_size) + threadIdx.x;
           i < n;
           i += std::size_t(gridDim.x) * block_size)
        p[i] = z[i] + beta * p[i];
    }
  } // namespace



  template <typename Number>
  DeviceReduction<Number>::DeviceReduction()
    : partial(2 * max_blocks)
    , scalar_slots(n_slots)
  {}



  template <typename Number>
  unsigned int
  DeviceReduction<Number>::n_blocks(const std::size_t n)
  {
    // Four entries per thread at least: fewer, fuller blocks make the
    // second pass cheap; the count depends on n only (reproducibility).
    const std::size_t blocks = (n + 4 * block_size - 1) / (4 * block_size);
    return static_cast<unsigned int>(
      std::clamp<std::size_t>(blocks, 1, max_blocks));
  }



  template <typename Number>
  void
  DeviceReduction<Number>::finish(const unsigned int n_blocks,
                                  const unsigned int n_sums,
                                  const unsigned int slot_0,
                                  const unsigned int slot_1) const
  {
    finish_kernel<<<1, block_size>>>(partial.data(),
                                     n_blocks,
                                     n_sums,
                                     scalar_slots.data(),
                                     slot_0,
                                     slot_1);
    GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
  }



  template <typename Number>
  void
  DeviceReduction<Number>::dot_to_slot(const DeviceVector<Number> &x,
                                       const DeviceVector<Number> &y,
                                       const unsigned int          slot) const
  {
    const unsigned int blocks = n_blocks(x.size());
    dot_kernel<<<blocks, block_size>>>(x.data(),
                                       y.data(),
                                       x.size(),
                                       partial.data());
    GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
    finish(blocks, 1, slot, slot);
  }



  template <typename Number>
  void
  DeviceReduction<Number>::read_slots(const unsigned int first_slot,
                                      const unsigned int n,
                                      double            *values) const
  {
    GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(values,
                                       scalar_slots.data() + first_slot,
                                       n * sizeof(double),
                                       cudaMemcpyDeviceToHost));
  }



  template <typename Number>
  double
  DeviceReduction<Number>::dot(const DeviceVector<Number> &x,
                               const DeviceVector<Number> &y) const
  {
    dot_to_slot(x, y, n_slots - 1);
    double result = 0;
    read_slots(n_slots - 1, 1, &result);
    return result;
  }



  template <typename Number>
  double
  DeviceReduction<Number>::l2_norm(const DeviceVector<Number> &x) const
  {
    return std::sqrt(dot(x, x));
  }



  template <typename Number>
  typename DeviceJacobiCG<Number>::Result
  DeviceJacobiCG<Number>::solve(const DeviceCSRMatrix<Number> &A,
                                const DeviceVector<Number>    &inverse_diagonal,
                                DeviceVector<Number>          &x,
                                const DeviceVector<Number>    &b,
                                const Control                 &control) const
  {
    const std::size_t n = b.size();
    if (x.size() != n)
      x.reinit(n);
    for (DeviceVector<Number> *v : {&r, &z, &p, &q})
      if (v->size() != n)
        v->reinit(n);

    const unsigned int blocks = DeviceReduction<Number>::n_blocks(n);
    double            *slots  = reduction.slots();
    cg_start<<<blocks, block_size>>>(b.data(),
                                     inverse_diagonal.data(),
                                     x.data(),
                                     r.data(),
                                     z.data(),
                                     p.data(),
                                     n,
                                     reduction.partial_sums());
    GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
    reduction.finish(blocks, 2, slot_rz, slot_rr);
    double rr = 0;
    reduction.read_slots(slot_rr, 1, &rr);

    Result result;
    result.initial_residual = std::sqrt(rr);
    result.final_residual   = result.initial_residual;
    const double tolerance =
      std::max(control.relative_tolerance * result.initial_residual,
               control.absolute_tolerance);
    if (result.initial_residual <= tolerance)
      {
        result.converged = true;
        return result;
      }

    for (unsigned int it = 0; it < control.max_iterations; ++it)
      {
        const unsigned int parity = it % 2;
        A.vmult(q, p);
        reduction.dot_to_slot(p, q, slot_pq);
        cg_update<<<blocks, block_size>>>(p.data(),
                                          q.data(),
                                          inverse_diagonal.data(),
                                          x.data(),
                                          r.data(),
                                          z.data(),
                                          n,
                                          slots,
                                          parity,
                                          reduction.partial_sums());
        GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
        // The new r.z goes to the other parity's slot, so that the
        // direction update reads the old and the new one.
        reduction.finish(blocks, 2, slot_rz + 1 - parity, slot_rr);
        reduction.read_slots(slot_rr, 1, &rr);
        result.iterations     = it + 1;
        result.final_residual = std::sqrt(rr);
        if (!std::isfinite(result.final_residual))
          return result;
        if (result.final_residual <= tolerance)
          {
            result.converged = true;
            return result;
          }
        cg_direction<<<blocks, block_size>>>(z.data(),
                                             p.data(),
                                             n,
                                             slots,
                                             parity);
        GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
      }
    return result;
  }



  template class DeviceReduction<float>;
  template class DeviceReduction<double>;
  template class DeviceJacobiCG<float>;
  template class DeviceJacobiCG<double>;
} // namespace GPUAssembly
