#ifndef gpu_assembly_engine_device_assembler_h
#define gpu_assembly_engine_device_assembler_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/engine/global_nz_plan.h>
#include <gpu_assembly/engine/shared_nz_plan.h>
#include <gpu_assembly/host/assembly_options.h>
#include <gpu_assembly/kernels/hex8_elasticity.h>
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
    /// (deal.II's GraphColoring): no atomics, reproducible.
    local_elem_colored
  };

  std::string
  to_string(const AssemblyMethod method);

  /// Parse "GlobalNZ", "SharedNZ", "LocalElem-atomic" or
  /// "LocalElem-colored".
  AssemblyMethod
  parse_assembly_method(const std::string &name);



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
    struct AdditionalData
    {
      AssemblyMethod           method = AssemblyMethod::global_nz;
      GlobalNZPlan::Parameters global_nz;
      SharedNZPlan::Parameters shared_nz;
      /// Threads per block of the LocalElem kernels.
      unsigned int local_elem_block_size = 128;
      /// Nodal values per node that the kernel reads (nodal_data's width).
      unsigned int n_nodal_fields = dim;
      /**
       * How GlobalNZ computes the element data of a Hex8ElasticityKernel
       * (kernels/hex8_elasticity.h): the engine's thread per element, or a
       * block per group of elements with a thread per entry (Sanfui-Sharma's
       * shapeMap strategy or their standard implementation). The block
       * strategies need method global_nz, trilinear hexahedra with
       * QGauss<3>(2) and MappingQ(1) (verify_hex8_arrays()), and the nodal
       * coordinates as nodal data (n_nodal_fields = 3). SharedNZ keeps the
       * thread per element: a hex8 element's 600 values (4.7 KiB in double)
       * would let a block hold so few elements that most would be computed
       * again by the blocks of each of their nodes.
       */
      ElementStrategy element_strategy = ElementStrategy::thread_per_element;
      /// Elements per thread block of the block strategies: 1, 2, 4 or 8,
      /// dividing global_nz.elements_per_block.
      unsigned int hex8_elements_per_block = 8;
      /**
       * Run linear simplices with one quadrature point through element
       * kernels compiled for them (compute_element()'s specializations:
       * sizes as constants, S(e) in registers). False runs them through
       * the general form, for comparisons; the results agree to rounding.
       */
      bool            specialize_simplices = true;
      AssemblyOptions options;
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
     * none); copying results back synchronizes. An assembly is only
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
      return global_nz_plan;
    }

    const SharedNZPlan &
    get_shared_nz_plan() const
    {
      return shared_nz_plan;
    }

    /**
     * The element data of the last GlobalNZ or LocalElem assemble(), in the
     * method's layout (GlobalNZPlan::element_data_index() for GlobalNZ):
     * for inspecting element matrices, e.g. in tests.
     */
    const DeviceVector<Number> &
    get_element_data() const
    {
      return element_data;
    }

    /// Device memory held by the plan and the element-data buffer, bytes.
    std::size_t
    device_memory_consumption() const;

    /// Number of colours (LocalElem-colored only).
    unsigned int
    n_colors() const
    {
      return color_offsets.empty() ? 0 : color_offsets.size() - 1;
    }

  private:
    const MeshArrays *arrays = nullptr;
    AdditionalData    additional_data;

    // Shared by all methods.
    DeviceVector<Number>         shape_values;
    DeviceVector<Number>         quadrature_weights;
    DeviceVector<Number>         inhomogeneities;
    DeviceVector<unsigned char>  dof_is_constrained;
    mutable DeviceVector<Number> element_data;
    /// Whether any element touches a constrained DoF.
    bool any_constrained_element = false;

    // GlobalNZ.
    GlobalNZPlan                global_nz_plan;
    DeviceVector<int>           block_element;
    DeviceVector<int>           cluster_node_offsets;
    DeviceVector<int>           cluster_nodes;
    DeviceVector<int>           block_connectivity;
    DeviceVector<Number>        block_supplemental;
    DeviceVector<int>           block_location;
    DeviceVector<unsigned char> block_has_constraints;
    DeviceVector<int>           reduction_target_begin;
    DeviceVector<int>           reduction_slice_offsets;
    DeviceVector<int>           reduction_array;
    DeviceVector<int>           upper_position;
    DeviceVector<int>           reduction_block_order;
    DeviceVector<int>           mirror_position;

    // SharedNZ. 16-bit arrays are held as bytes (DeviceVector has no 16-bit
    // instantiation).
    SharedNZPlan                shared_nz_plan;
    DeviceVector<int>           shared_halo_offsets;
    DeviceVector<int>           shared_halo_nodes;
    DeviceVector<int>           shared_element_offsets;
    DeviceVector<int>           shared_connectivity;
    DeviceVector<unsigned char> shared_slots;
    DeviceVector<Number>        shared_supplemental;
    DeviceVector<int>           shared_supplemental_offsets;
    DeviceVector<int>           shared_location;
    DeviceVector<unsigned char> shared_has_constraints;
    DeviceVector<int>           shared_n_free_elements;
    DeviceVector<int>           shared_slice_offsets;
    DeviceVector<unsigned char> shared_sources;
    DeviceVector<int>           shared_target_offsets;
    DeviceVector<int>           shared_targets;

    // LocalElem: element arrays column-major in the method's element order.
    std::vector<unsigned int>   color_offsets;
    DeviceVector<int>           element_connectivity;
    DeviceVector<Number>        element_supplemental;
    DeviceVector<int>           element_location;
    DeviceVector<int>           element_nonzero_map;
    DeviceVector<unsigned char> element_has_constraints;
  };
} // namespace GPUAssembly

#endif
