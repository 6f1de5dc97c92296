// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_device_assembler_h
#define gpu_assembly_engine_device_assembler_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/engine/assembly_options.h>
#include <gpu_assembly/engine/constraints/device_data.h>
#include <gpu_assembly/engine/global_nz/device_data.h>
#include <gpu_assembly/engine/local_elem/device_data.h>
#include <gpu_assembly/engine/shared_nz/device_data.h>
#include <gpu_assembly/lac/device_csr_matrix.h>
#include <gpu_assembly/lac/device_vector.h>

#include <string>
#include <vector>

// cudaStream_t without the CUDA headers, for host code.
struct CUstream_st;

namespace GPUAssembly
{
  /**
   * The GPU assembly methods, chosen at run time.
   */
  enum class AssemblyMethod
  {
    /// Element kernel writes element data to global memory, a second kernel
    /// reduces it with LPT-packed reduction arrays (chapter Sec. 16.3.1).
    global_nz,
    /// A block per node part computes, in shared memory, the element data
    /// its rows need and assembles them straight into the matrix: element
    /// data never reach global memory (chapter Sec. 16.3.2).
    shared_nz,
    /// A thread per element adds its element data straight into the matrix
    /// with atomicAdd: the usual baseline (results vary in the last bits
    /// from run to run).
    local_elem_atomic,
    /// A thread per element, one launch per colour of a mesh colouring
    /// (color_elements(), first fit): no atomics, reproducible.
    local_elem_colored
  };

  std::string
  to_string(const AssemblyMethod method);

  /// Parse "GlobalNZ", "SharedNZ", "LocalElem-atomic" or
  /// "LocalElem-colored".
  AssemblyMethod
  parse_assembly_method(const std::string &name);



  /**
   * The device assembly method and each method's own choices: the method's
   * plan parameters. Only the chosen method's are read.
   */
  struct DeviceMethodData
  {
    AssemblyMethod method = AssemblyMethod::global_nz;
    /// GlobalNZ: symmetric element data (symmetric kernels only) and
    /// tuning values.
    GlobalNZPlan::Parameters global_nz;
    /// SharedNZ: node pairs (kernels with a node-pair form only) and tuning
    /// values.
    SharedNZPlan::Parameters shared_nz;
    /// LocalElem-atomic and LocalElem-colored: the threads per block.
    LocalElemPlan::Parameters local_elem;
  };



  /**
   * Assembles a matrix and right-hand side on the device with any of the
   * methods above, from MeshArrays and an element kernel functor. reinit()
   * builds the method's plan on the host and uploads it once; assemble()
   * then runs only device kernels, allocates nothing, and can be called as
   * often as a nonlinear or time-dependent problem needs.
   *
   * assemble() is a member template over the kernel. Its definition is in
   * device_assembler.templates.cuh, for .cu files; the plugin instantiates
   * it for the bundled kernels (Laplace, mass with 1 and dim components,
   * linear elasticity, neo-Hookean) for dim 2 and 3 and float and double. A
   * user kernel needs one explicit instantiation in a .cu file of the user's.
   */
  template <int dim, typename Number>
  class DeviceAssembler
  {
  public:
    /**
     * The choices a user makes: the method and its choices
     * (DeviceMethodData), and what is assembled from which nodal data.
     * Everything else is chosen automatically.
     */
    struct AdditionalData : DeviceMethodData
    {
      AssemblyOptions options;
      /// Nodal values per node that the kernel reads (nodal_data's width).
      unsigned int n_nodal_fields = dim;
    };

    /**
     * Build and upload the plan for @p arrays, which must outlive this
     * object. Throws ExcDeviceMemory if the device cannot hold it.
     */
    void
    reinit(const MeshArrays &arrays, const AdditionalData &additional_data);

    /**
     * Assemble into @p matrix (reinit()ed with the same arrays) and @p rhs
     * (resized if needed) from @p nodal_data (n_nodal_fields values per
     * node). Kernels are enqueued on @p stream (the default stream if
     * none); copying results back synchronizes. A kernel with an element
     * stage of its own (ElementStageTraits) that asks for it needs
     * GlobalNZ, and its first assemble() after a reinit() checks the
     * arrays for that stage. An assembly is only
     * asynchronous operations on that stream, so a caller may capture it
     * into a CUDA graph (on a stream of its own: the legacy default stream
     * cannot be captured).
     */
    template <class Kernel>
    void
    assemble(const Kernel               &kernel,
             const DeviceVector<Number> &nodal_data,
             DeviceCSRMatrix<Number>    &matrix,
             DeviceVector<Number>       &rhs,
             CUstream_st                *stream = nullptr) const;

    AssemblyMethod
    method() const
    {
      return additional_data.method;
    }

    const GlobalNZPlan &
    get_global_nz_plan() const
    {
      return global_nz.get_plan();
    }

    const SharedNZPlan &
    get_shared_nz_plan() const
    {
      return shared_nz.get_plan();
    }

    /**
     * The element data of the last GlobalNZ or LocalElem assemble(), in the
     * method's layout (GlobalNZPlan::element_data_index() for GlobalNZ):
     * for inspecting element matrices, e.g. in tests.
     */
    const DeviceVector<Number> &
    get_element_data() const;

    /// Device memory held by the plan and the element-data buffer, bytes.
    std::size_t
    device_memory_consumption() const;

    /// Number of colours (LocalElem-colored only).
    unsigned int
    n_colors() const
    {
      return local_elem.n_colors();
    }

  private:
    const MeshArrays *arrays = nullptr;
    AdditionalData    additional_data;

    // Shared by all methods.
    DeviceVector<Number>        shape_values;
    DeviceVector<Number>        quadrature_weights;
    DeviceVector<Number>        inhomogeneities;
    DeviceVector<unsigned char> dof_is_constrained;

    // The chosen method's; the others stay empty.
    internal::GlobalNZDeviceData<Number>  global_nz;
    internal::SharedNZDeviceData<Number>  shared_nz;
    internal::LocalElemDeviceData<Number> local_elem;
    /// Distributes the contributions of elements that touch constraint
    /// lines with entries, after any method.
    internal::ConstraintDeviceData<Number> constraint_stage;
  };
} // namespace GPUAssembly

#endif
