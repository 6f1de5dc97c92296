// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The device branches of the loops of the CG, BiCGStab and their
// preconditioners (preconditioned_cg.h, preconditioned_bicgstab.h,
// chebyshev.h, point_block_jacobi.h), instantiated for their bodies:
// DevicePreconditionedCG and the resident distributed solvers run them.

#include <gpu_assembly/lac/chebyshev.h>
#include <gpu_assembly/lac/index_loops.cuh>
#include <gpu_assembly/lac/point_block_jacobi.h>
#include <gpu_assembly/lac/preconditioned_bicgstab.h>
#include <gpu_assembly/lac/preconditioned_cg.h>

namespace
{
  // Template arguments with a comma do not pass through the macros.
  template <typename Number>
  using JacobiStart =
    GPUAssembly::CGStartStep<Number, GPUAssembly::PointJacobi<Number>>;
  template <typename Number>
  using JacobiUpdate =
    GPUAssembly::CGUpdateStep<Number, GPUAssembly::PointJacobi<Number>>;
  template <typename Number>
  using JacobiBiCGStabStart =
    GPUAssembly::BiCGStabStartStep<Number, GPUAssembly::PointJacobi<Number>>;
  template <typename Number>
  using JacobiBiCGStabHalf =
    GPUAssembly::BiCGStabHalfStep<Number, GPUAssembly::PointJacobi<Number>>;
  template <typename Number>
  using JacobiBiCGStabDirection =
    GPUAssembly::BiCGStabDirectionStep<Number,
                                       GPUAssembly::PointJacobi<Number>>;
} // namespace

#define GPU_ASSEMBLY_INSTANTIATE_CG_LOOPS(Number)                             \
  GPU_ASSEMBLY_INSTANTIATE_SUM_OVER_INDICES(1,                                \
                                            GPUAssembly::DotProduct<Number>)  \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(                                    \
    GPUAssembly::CSRInverseDiagonal<Number>)                                  \
  GPU_ASSEMBLY_INSTANTIATE_SUM_OVER_INDICES(2, JacobiStart<Number>)           \
  GPU_ASSEMBLY_INSTANTIATE_SUM_OVER_INDICES(2, JacobiUpdate<Number>)          \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(                                    \
    GPUAssembly::CGDirectionStep<Number>)                                     \
  GPU_ASSEMBLY_INSTANTIATE_SUM_OVER_INDICES(                                  \
    1,                                                                        \
    GPUAssembly::CGResidualStartStep<Number>)                                 \
  GPU_ASSEMBLY_INSTANTIATE_SUM_OVER_INDICES(                                  \
    1,                                                                        \
    GPUAssembly::CGResidualUpdateStep<Number>)                                \
  GPU_ASSEMBLY_INSTANTIATE_SUM_OVER_INDICES(                                  \
    1,                                                                        \
    GPUAssembly::CGFirstDirectionStep<Number>)                                \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(GPUAssembly::ChebyshevStep<Number>) \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(                                    \
    GPUAssembly::ChebyshevStartVector<Number>)                                \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(                                    \
    GPUAssembly::PointBlockInverse<Number>)                                   \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(                                    \
    GPUAssembly::PointBlockApply<Number>)                                     \
  GPU_ASSEMBLY_INSTANTIATE_SUM_OVER_INDICES(1, JacobiBiCGStabStart<Number>)   \
  GPU_ASSEMBLY_INSTANTIATE_SUM_OVER_INDICES(1, JacobiBiCGStabHalf<Number>)    \
  GPU_ASSEMBLY_INSTANTIATE_SUM_OVER_INDICES(                                  \
    2,                                                                        \
    GPUAssembly::BiCGStabStabilizerSums<Number>)                              \
  GPU_ASSEMBLY_INSTANTIATE_SUM_OVER_INDICES(                                  \
    2,                                                                        \
    GPUAssembly::BiCGStabUpdateStep<Number>)                                  \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(                                    \
    GPUAssembly::BiCGStabHalfUpdate<Number>)                                  \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(JacobiBiCGStabDirection<Number>)

GPU_ASSEMBLY_INSTANTIATE_CG_LOOPS(float)
GPU_ASSEMBLY_INSTANTIATE_CG_LOOPS(double)
