// SPDX-License-Identifier: LGPL-2.1-or-later
// Local stiffness matrices of trilinear hexahedra on the GPU, three element
// kernels side by side (Sanfui and Sharma's shapeMap strategy, their
// "standard implementation", and the engine's thread-per-element
// LinearElasticityKernel through GlobalNZ's element kernel), from 10 k to
// 2 M (or more) elements of a distorted structured mesh. All write GlobalNZ's
// element-data layout. Prints time, GFLOP/s (counted the seed's way and as
// executed), GB/s of the element data written, and the fractions of the FP64
// rate and copy bandwidth measured in the same run.
//
//   hex8_local_matrices [max_elements = 2000376] [repetitions = 7]
//
// Needs a GPU. Every kernel's element data is checked against the host
// version (hex8_elasticity.h) on sampled clusters before it is timed.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/engine/global_nz/kernels.cuh>
#include <gpu_assembly/kernels/element_kernels.h>
#include <gpu_assembly/kernels/hex8_elasticity.cuh>
#include <gpu_assembly/lac/device_vector.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace GPUAssembly;

namespace
{
  constexpr unsigned int cluster_size = 128; // GlobalNZ's elements per block

  // Runs body(begin, end) over [0, n) on all host cores.
  void
  parallel_for(const std::size_t                                    n,
               const std::function<void(std::size_t, std::size_t)> &body)
  {
    const unsigned int n_threads =
      std::max(1u, std::min(64u, std::thread::hardware_concurrency()));
    std::vector<std::thread> threads;
    for (unsigned int i = 0; i < n_threads; ++i)
      threads.emplace_back(body, n * i / n_threads, n * (i + 1) / n_threads);
    for (auto &thread : threads)
      thread.join();
  }

  // A distorted n x n x n hexahedral mesh with the element data GlobalNZ's
  // plan would hold for it: elements in lexicographic order form the
  // clusters, E_k holds block-local node numbers, S(e) the quadrature data
  // of LinearElasticityKernel followed by each element's E and nu.
  struct Mesh
  {
    unsigned int        n_elements = 0, n_nodes = 0, n_clusters = 0;
    std::vector<double> coordinates;
    std::vector<int>    connectivity; // e * 8 + a
    std::vector<double> youngs_modulus, poissons_ratio;
    std::vector<int>    block_element, cluster_node_offsets, cluster_nodes,
      block_connectivity;
    std::vector<double>           block_supplemental;
    static constexpr unsigned int n_supplemental = Hex8::n_geometry_values + 2;

    explicit Mesh(const unsigned int n)
    {
      const unsigned int n1 = n + 1;
      n_nodes               = n1 * n1 * n1;
      n_elements            = n * n * n;
      coordinates.resize(3 * static_cast<std::size_t>(n_nodes));
      std::mt19937                           rng(42);
      std::uniform_real_distribution<double> jitter(-0.3, 0.3);
      const double                           h = 1. / n;
      for (unsigned int k = 0; k < n1; ++k)
        for (unsigned int j = 0; j < n1; ++j)
          for (unsigned int i = 0; i < n1; ++i)
            {
              const std::size_t  node     = (k * n1 + j) * n1 + i;
              const unsigned int index[3] = {i, j, k};
              for (unsigned int d = 0; d < 3; ++d)
                {
                  const bool interior = index[d] > 0 && index[d] < n;
                  // Interior nodes move: the cells are not parallelepipeds.
                  coordinates[node * 3 + d] =
                    (index[d] + (interior ? jitter(rng) : 0.)) * h *
                    (1. + 0.5 * d);
                }
            }
      connectivity.resize(8 * static_cast<std::size_t>(n_elements));
      youngs_modulus.resize(n_elements);
      poissons_ratio.resize(n_elements);
      std::uniform_real_distribution<double> E(1., 3.), nu(0.1, 0.45);
      for (unsigned int k = 0, e = 0; k < n; ++k)
        for (unsigned int j = 0; j < n; ++j)
          for (unsigned int i = 0; i < n; ++i, ++e)
            {
              for (unsigned int a = 0; a < 8; ++a)
                connectivity[8 * static_cast<std::size_t>(e) + a] =
                  ((k + ((a >> 2) & 1)) * n1 + j + ((a >> 1) & 1)) * n1 + i +
                  (a & 1);
              youngs_modulus[e] = E(rng);
              poissons_ratio[e] = nu(rng);
            }

      n_clusters = (n_elements + cluster_size - 1) / cluster_size;
      const std::size_t n_slots =
        static_cast<std::size_t>(n_clusters) * cluster_size;
      block_element.assign(n_slots, -1);
      for (unsigned int e = 0; e < n_elements; ++e)
        block_element[e] = e;
      cluster_node_offsets.assign(n_clusters + 1, 0);
      block_connectivity.assign(n_slots * 8, 0);
      std::vector<int> nodes;
      for (unsigned int k = 0; k < n_clusters; ++k)
        {
          nodes.clear();
          for (unsigned int t = 0; t < cluster_size; ++t)
            if (const int e = block_element[k * cluster_size + t]; e >= 0)
              nodes.insert(nodes.end(),
                           connectivity.begin() + 8 * std::size_t(e),
                           connectivity.begin() + 8 * std::size_t(e) + 8);
          std::sort(nodes.begin(), nodes.end());
          nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
          for (unsigned int t = 0; t < cluster_size; ++t)
            if (const int e = block_element[k * cluster_size + t]; e >= 0)
              for (unsigned int a = 0; a < 8; ++a)
                block_connectivity[(std::size_t(k) * 8 + a) * cluster_size +
                                   t] =
                  std::lower_bound(nodes.begin(),
                                   nodes.end(),
                                   connectivity[8 * std::size_t(e) + a]) -
                  nodes.begin();
          cluster_nodes.insert(cluster_nodes.end(), nodes.begin(), nodes.end());
          cluster_node_offsets[k + 1] = cluster_nodes.size();
        }

      block_supplemental.assign(n_slots * n_supplemental, 0.);
      parallel_for(
        n_clusters,
        [&](const std::size_t begin, const std::size_t end) {
          for (std::size_t k = begin; k < end; ++k)
            for (unsigned int t = 0; t < cluster_size; ++t)
              {
                const int e = block_element[k * cluster_size + t];
                if (e < 0)
                  continue;
                const auto S = [&](const unsigned int i) -> double & {
                  return block_supplemental[(k * n_supplemental + i) *
                                              cluster_size +
                                            t];
                };
                const auto x = [&](const unsigned int a, const unsigned int d) {
                  return coordinates
                    [3 * std::size_t(connectivity[8 * std::size_t(e) + a]) + d];
                };
                for (unsigned int q = 0; q < Hex8::n_q_points; ++q)
                  {
                    const unsigned int base = q * (1 + 24);
                    S(base)                 = Hex8::compute_geometry<double>(
                      x,
                      q,
                      [&](const unsigned int a,
                          const unsigned int d) -> double                 &{
                        return S(base + 1 + 3 * a + d);
                      });
                  }
                S(Hex8::material_offset)     = youngs_modulus[e];
                S(Hex8::material_offset + 1) = poissons_ratio[e];
              }
        });
    }
  };

  // Host reference of element e: Hex8::ElementData with the same tables.
  void
  host_element(const Mesh          &mesh,
               const unsigned int   e,
               const bool           uniform,
               const double         E0,
               const double         nu0,
               const double        *body_force,
               std::vector<double> &matrix,
               std::vector<double> &vector)
  {
    Hex8::ElementData<double> data;
    data.reinit(
      [&](const unsigned int a, const unsigned int d) {
        return mesh.coordinates
          [3 * std::size_t(mesh.connectivity[8 * std::size_t(e) + a]) + d];
      },
      uniform ? E0 : mesh.youngs_modulus[e],
      uniform ? nu0 : mesh.poissons_ratio[e]);
    matrix.resize(576);
    vector.resize(24);
    for (unsigned int i = 0; i < 24; ++i)
      {
        vector[i] = Hex8::body_force_entry<double>(data, i, body_force);
        for (unsigned int j = 0; j < 24; ++j)
          matrix[i * 24 + j] = Hex8::shape_map_entry<double>(data, i, j);
      }
  }

  __global__ void
  fma_kernel(const unsigned int n_iterations, const double seed, double *out)
  {
    // Eight independent chains keep the FP64 pipes busy despite latency.
    double a[8];
#pragma unroll
    for (unsigned int i = 0; i < 8; ++i)
      a[i] = seed + threadIdx.x + i;
    const double b = 0.999999, c = 1e-7;
    for (unsigned int it = 0; it < n_iterations; ++it)
#pragma unroll
      for (unsigned int i = 0; i < 8; ++i)
        a[i] = fma(a[i], b, c);
    double sum = 0;
#pragma unroll
    for (unsigned int i = 0; i < 8; ++i)
      sum += a[i];
    if (sum == 12345.) // never true; keeps the chains alive
      out[0] = sum;
  }

  double
  measure_fp64_rate()
  {
    const DeviceInfo     info    = get_device_info(0);
    const unsigned int   blocks  = info.n_multiprocessors * 8;
    const unsigned int   threads = 256;
    const unsigned int   n_iter  = 1 << 14;
    DeviceVector<double> out(1);
    cudaEvent_t          start, stop;
    GPU_ASSEMBLY_CHECK_CUDA(cudaEventCreate(&start));
    GPU_ASSEMBLY_CHECK_CUDA(cudaEventCreate(&stop));
    float best = 1e30f;
    for (unsigned int r = 0; r < 5; ++r)
      {
        GPU_ASSEMBLY_CHECK_CUDA(cudaEventRecord(start));
        fma_kernel<<<blocks, threads>>>(n_iter, 1. + r, out.data());
        GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
        GPU_ASSEMBLY_CHECK_CUDA(cudaEventRecord(stop));
        GPU_ASSEMBLY_CHECK_CUDA(cudaEventSynchronize(stop));
        float ms;
        GPU_ASSEMBLY_CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        best = std::min(best, ms);
      }
    GPU_ASSEMBLY_CHECK_CUDA(cudaEventDestroy(start));
    GPU_ASSEMBLY_CHECK_CUDA(cudaEventDestroy(stop));
    return 2. * 8. * n_iter * blocks * threads / (best * 1e-3);
  }

  struct Variant
  {
    std::string name;
    // thread_per_element: the engine's kernel.
    Hex8BlockStrategy strategy;
    bool              symmetric;
    // The entry form of the block kernels: ElementStrategy::shape_map runs
    // the isotropic one; the block form is the seed's arithmetic as it is.
    internal::Hex8EntryForm form = internal::Hex8EntryForm::standard;
  };

  // The element-data layout every kernel writes, as a GlobalNZ plan for 2
  // M elements chooses it (their element data exceed the 1.5 GB above which
  // the plan groups full matrices by the components of a column node).
  unsigned int
  entry_group(const Variant &v)
  {
    return v.symmetric ? 1 : 3;
  }

  // FLOPs per element counted the seed's way (its 20 and 77 per entry and
  // Gauss point) and as the code executes them (hex8_elasticity.h: for the
  // isotropic shapeMap form 4 per Gauss point and 3 more for each of the
  // 384 entries with different components, 6 per Gauss point and 6 more for
  // each of the 192 with the same component (in the upper triangle 192 and
  // 108); 21 per entry and Gauss point for the block form, 79 for the
  // standard one; 348 per Gauss point for the geometry, 17 per vector
  // entry; for the engine's kernel 74 per node pair and Gauss point plus 16
  // per node and Gauss point, as LinearElasticityKernel is written).
  double
  seed_flops(const Variant &v)
  {
    const double entries = v.symmetric ? 300 : 576;
    if (v.strategy.element_strategy == ElementStrategy::shape_map ||
        v.strategy.element_strategy == ElementStrategy::shape_map_per_entry)
      return entries * 8 * 20;
    if (v.strategy.element_strategy == ElementStrategy::standard)
      return entries * 8 * 77;
    return 0;
  }

  double
  executed_flops(const Variant &v)
  {
    const double entries = v.symmetric ? 300 : 576;
    const double extra   = 8 * 348 + 24 * 17;
    if (v.strategy.element_strategy == ElementStrategy::thread_per_element)
      return 64 * 8 * 74 + 8 * 8 * 2 + 24;
    if (v.form == internal::Hex8EntryForm::shape_map_isotropic ||
        v.form == internal::Hex8EntryForm::shape_map_rows)
      {
        const double same = v.symmetric ? 108 : 192;
        return same * (8 * 6 + 6) + (entries - same) * (8 * 4 + 3) + extra;
      }
    if (v.form == internal::Hex8EntryForm::shape_map_block)
      return entries * 8 * 21 + extra;
    return entries * 8 * 79 + extra;
  }
} // namespace



int
main(int argc, char **argv)
{
  try
    {
      const unsigned int max_elements =
        argc > 1 ? std::stoul(argv[1]) : 2000376u;
      const unsigned int repetitions = argc > 2 ? std::stoul(argv[2]) : 7u;
      if (n_cuda_devices() == 0)
        {
          std::cout << "hex8_local_matrices needs a CUDA device; none found."
                    << std::endl;
          return 77;
        }
      const DeviceInfo   info = get_device_info(0);
      const unsigned int n =
        static_cast<unsigned int>(std::ceil(std::cbrt(double(max_elements))));
      std::cout << "Device: " << info.name << ", " << info.n_multiprocessors
                << " SMs" << std::endl;
      const Mesh mesh(n);
      std::cout << "Mesh: " << n << "^3 = " << mesh.n_elements
                << " distorted hexahedra, " << mesh.n_nodes << " nodes"
                << std::endl;

      const double fp64_rate      = measure_fp64_rate();
      const double copy_bandwidth = measure_copy_bandwidth();
      std::printf("Measured FP64 rate (FMA kernel): %.2f TFLOP/s; copy "
                  "bandwidth: %.0f GB/s\n",
                  fp64_rate * 1e-12,
                  copy_bandwidth * 1e-9);

      const DeviceVector<int> block_element(mesh.block_element);
      const DeviceVector<int> cluster_node_offsets(mesh.cluster_node_offsets);
      const DeviceVector<int> cluster_nodes(mesh.cluster_nodes);
      const DeviceVector<int> block_connectivity(mesh.block_connectivity);
      const DeviceVector<double> block_supplemental(mesh.block_supplemental);
      const DeviceVector<double> nodal(mesh.coordinates);
      std::vector<double>        phi(64);
      for (unsigned int q = 0; q < 8; ++q)
        for (unsigned int a = 0; a < 8; ++a)
          phi[q * 8 + a] = Hex8::reference_value<double>(a, q);
      const DeviceVector<double>        reference_values(phi);
      const DeviceVector<unsigned char> no_constraints(
        std::vector<unsigned char>(mesh.block_element.size(), 0));
      DeviceVector<double> element_data(
        static_cast<std::size_t>(mesh.n_clusters) * cluster_size * 600);

      const double                 body_force[3] = {0.5, -1., 2.};
      Hex8ElasticityKernel<double> hex8;
      hex8.per_element_material = true;
      for (unsigned int d = 0; d < 3; ++d)
        hex8.body_force[d] = body_force[d];
      // The engine's kernel has one material: E0, nu0.
      const double                      E0 = 2., nu0 = 0.3;
      LinearElasticityKernel<3, double> engine;
      engine.lambda = Hex8::lame_lambda(E0, nu0);
      engine.mu     = Hex8::lame_mu(E0, nu0);
      for (unsigned int d = 0; d < 3; ++d)
        engine.body_force[d] = body_force[d];

      using Form                          = internal::Hex8EntryForm;
      const std::vector<Variant> variants = {
        {"shapeMap G=8",
         {ElementStrategy::shape_map, 8},
         false,
         Form::shape_map_rows},
        {"shapeMap G=4",
         {ElementStrategy::shape_map, 4},
         false,
         Form::shape_map_rows},
        {"shapeMap/entry G=8",
         {ElementStrategy::shape_map_per_entry, 8},
         false,
         Form::shape_map_isotropic},
        {"shapeMap/entry G=4",
         {ElementStrategy::shape_map_per_entry, 4},
         false,
         Form::shape_map_isotropic},
        {"shapeMap/entry G=1",
         {ElementStrategy::shape_map_per_entry, 1},
         false,
         Form::shape_map_isotropic},
        {"shapeMap C-block G=8",
         {ElementStrategy::shape_map_per_entry, 8},
         false,
         Form::shape_map_block},
        {"standard G=8", {ElementStrategy::standard, 8}, false, Form::standard},
        {"standard G=1", {ElementStrategy::standard, 1}, false, Form::standard},
        {"engine thread/elem", {ElementStrategy::thread_per_element, 0}, false},
        {"shapeMap sym G=8",
         {ElementStrategy::shape_map, 8},
         true,
         Form::shape_map_rows},
        {"shapeMap/entry sym",
         {ElementStrategy::shape_map_per_entry, 8},
         true,
         Form::shape_map_isotropic},
        {"engine sym", {ElementStrategy::thread_per_element, 0}, true}};

      unsigned int max_cluster_nodes = 0;
      for (unsigned int k = 0; k < mesh.n_clusters; ++k)
        max_cluster_nodes =
          std::max<unsigned int>(max_cluster_nodes,
                                 mesh.cluster_node_offsets[k + 1] -
                                   mesh.cluster_node_offsets[k]);

      const auto launch = [&](const Variant &v, const unsigned int n_clusters) {
        const std::size_t n_slots =
          static_cast<std::size_t>(n_clusters) * cluster_size;
        if (v.strategy.element_strategy != ElementStrategy::thread_per_element)
          {
            const unsigned int n_matrix = v.symmetric ? 300 : 576;
            // No element is constrained: no condensation.
            const GlobalNZStageArguments<double> arguments{
              block_element.data(),
              cluster_node_offsets.data(),
              cluster_nodes.data(),
              block_connectivity.data(),
              block_supplemental.data(),
              Mesh::n_supplemental,
              cluster_size,
              n_slots,
              entry_group(v),
              nodal.data(),
              element_data.data(),
              v.symmetric,
              n_matrix,
              n_matrix + 24,
              false,
              nullptr,
              nullptr};
            internal::launch_hex8_element_kernel(hex8,
                                                 v.form,
                                                 v.symmetric,
                                                 v.strategy.elements_per_block,
                                                 arguments);
            return;
          }
        const ElementStageData<double> data{8,
                                            8,
                                            24,
                                            3,
                                            false,
                                            false,
                                            reference_values.data(),
                                            nullptr,
                                            no_constraints.data(),
                                            nullptr,
                                            false};
        const unsigned int             n_matrix = v.symmetric ? 300 : 576;
        const auto kernel = v.symmetric ? internal::global_nz_element_kernel<
                                            3,
                                            double,
                                            LinearElasticityKernel<3, double>,
                                            true> :
                                          internal::global_nz_element_kernel<
                                            3,
                                            double,
                                            LinearElasticityKernel<3, double>,
                                            false>;
        const std::size_t bytes = max_cluster_nodes * 3 * sizeof(double);
        GPU_ASSEMBLY_CHECK_CUDA(
          cudaFuncSetAttribute(kernel,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(bytes)));
        kernel<<<n_clusters, cluster_size, bytes>>>(engine,
                                                    data,
                                                    block_element.data(),
                                                    cluster_node_offsets.data(),
                                                    cluster_nodes.data(),
                                                    block_connectivity.data(),
                                                    block_supplemental.data(),
                                                    // L(e, .) is never read:
                                                    // no element is
                                                    // constrained.
                                                    block_connectivity.data(),
                                                    no_constraints.data(),
                                                    Mesh::n_supplemental,
                                                    n_matrix,
                                                    n_matrix + 24,
                                                    entry_group(v),
                                                    nodal.data(),
                                                    element_data.data());
        GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
      };

      // Check every variant on sampled clusters of the whole mesh.
      std::cout << "\nCheck against the host version (hex8_elasticity.h), "
                   "max |difference| / max |entry| over sampled elements:"
                << std::endl;
      bool all_ok = true;
      {
        std::vector<unsigned int> clusters = {0, mesh.n_clusters - 1};
        std::mt19937              rng(7);
        for (unsigned int i = 0; i < 14; ++i)
          clusters.push_back(rng() % mesh.n_clusters);
        std::vector<double> matrix, vector, device(600 * cluster_size);
        for (const Variant &v : variants)
          {
            launch(v, mesh.n_clusters);
            GPU_ASSEMBLY_CHECK_CUDA(cudaDeviceSynchronize());
            const bool uniform = v.strategy.element_strategy ==
                                 ElementStrategy::thread_per_element;
            const unsigned n_matrix   = v.symmetric ? 300 : 576;
            double         difference = 0, size = 0;
            for (const unsigned int k : clusters)
              {
                GPU_ASSEMBLY_CHECK_CUDA(
                  cudaMemcpy(device.data(),
                             element_data.data() +
                               std::size_t(k) * (n_matrix + 24) * cluster_size,
                             (n_matrix + 24) * cluster_size * sizeof(double),
                             cudaMemcpyDeviceToHost));
                for (unsigned int t = 0; t < cluster_size; ++t)
                  {
                    const int e = mesh.block_element[k * cluster_size + t];
                    if (e < 0)
                      continue;
                    host_element(mesh,
                                 e,
                                 uniform,
                                 E0,
                                 nu0,
                                 body_force,
                                 matrix,
                                 vector);
                    for (unsigned int i = 0; i < n_matrix + 24; ++i)
                      {
                        double reference;
                        if (i >= n_matrix)
                          reference = vector[i - n_matrix];
                        else
                          {
                            unsigned int row, column;
                            Hex8::entry_position(i, v.symmetric, row, column);
                            reference = matrix[row * 24 + column];
                          }
                        // GlobalNZPlan::element_data_index()'s layout.
                        const std::size_t position =
                          ElementOutput<double, 3>::position(i,
                                                             cluster_size,
                                                             !v.symmetric) +
                          entry_group(v) * t;
                        difference =
                          std::max(difference,
                                   std::abs(device[position] - reference));
                        size = std::max(size, std::abs(reference));
                      }
                  }
              }
            const bool ok = difference <= 1e-13 * size;
            all_ok        = all_ok && ok;
            std::printf("  %-20s %.2e %s\n",
                        v.name.c_str(),
                        difference / size,
                        ok ? "ok" : "FAILED");
          }
      }
      if (!all_ok)
        {
          std::cout << "A kernel disagrees with the host version." << std::endl;
          return 1;
        }

      std::vector<unsigned int> sizes;
      for (const unsigned int s : {10000u, 50000u, 200000u, 500000u, 1000000u})
        if (s < mesh.n_elements)
          sizes.push_back(s);
      sizes.push_back(mesh.n_elements);

      std::printf(
        "\nTimes: median of %u after a warm-up. seed GF/s: the seed's FLOP "
        "count (20 or 77 per entry and Gauss point); exec GF/s: FLOPs as "
        "executed; %%FP64 of the measured rate; GB/s: element data written "
        "(matrix + vector), %%BW of the copy bandwidth. Floors of the full "
        "matrices: seed fl. (shapeMap's FLOPs counted the seed's way / FP64 "
        "rate), exec fl. (the FLOPs shapeMap executes / FP64 rate) and "
        "write fl. (full element data / copy bandwidth); x seed and x exec: "
        "time over the larger of the write floor and the seed or the "
        "executed FLOP floor.\n\n",
        repetitions);
      std::printf("%10s  %-20s %9s %9s %9s %6s %9s %6s %8s %8s %8s %6s %6s\n",
                  "elements",
                  "kernel",
                  "time[ms]",
                  "seed GF/s",
                  "exec GF/s",
                  "%FP64",
                  "GB/s",
                  "%BW",
                  "seed fl.",
                  "exec fl.",
                  "write fl",
                  "x seed",
                  "x exec");
      cudaEvent_t start, stop;
      GPU_ASSEMBLY_CHECK_CUDA(cudaEventCreate(&start));
      GPU_ASSEMBLY_CHECK_CUDA(cudaEventCreate(&stop));
      for (const unsigned int size : sizes)
        {
          const unsigned int n_clusters =
            (size + cluster_size - 1) / cluster_size;
          const double n_el       = double(n_clusters) * cluster_size;
          const double flop_floor = n_el * 576 * 8 * 20 / fp64_rate * 1e3;
          const double exec_floor =
            n_el * executed_flops(variants.front()) / fp64_rate * 1e3;
          const double write_floor = n_el * 600 * 8 / copy_bandwidth * 1e3;
          for (const Variant &v : variants)
            {
              std::vector<float> times;
              launch(v, n_clusters);
              for (unsigned int r = 0; r < repetitions; ++r)
                {
                  GPU_ASSEMBLY_CHECK_CUDA(cudaEventRecord(start));
                  launch(v, n_clusters);
                  GPU_ASSEMBLY_CHECK_CUDA(cudaEventRecord(stop));
                  GPU_ASSEMBLY_CHECK_CUDA(cudaEventSynchronize(stop));
                  float ms;
                  GPU_ASSEMBLY_CHECK_CUDA(
                    cudaEventElapsedTime(&ms, start, stop));
                  times.push_back(ms);
                }
              std::sort(times.begin(), times.end());
              const double ms    = times[times.size() / 2];
              const double bytes = n_el * ((v.symmetric ? 300 : 576) + 24) * 8;
              const double seed  = seed_flops(v) * n_el / (ms * 1e-3);
              const double exec  = executed_flops(v) * n_el / (ms * 1e-3);
              char         seed_text[32];
              if (seed > 0)
                std::snprintf(seed_text,
                              sizeof(seed_text),
                              "%9.0f",
                              seed * 1e-9);
              else
                std::snprintf(seed_text, sizeof(seed_text), "%9s", "-");
              std::printf(
                "%10u  %-20s %9.3f %s %9.0f %5.1f%% %9.0f %5.1f%% %8.3f %8.3f "
                "%8.3f %6.2f %6.2f\n",
                n_clusters * cluster_size,
                v.name.c_str(),
                ms,
                seed_text,
                exec * 1e-9,
                100. * exec / fp64_rate,
                bytes / (ms * 1e-3) * 1e-9,
                100. * bytes / (ms * 1e-3) / copy_bandwidth,
                flop_floor,
                exec_floor,
                write_floor,
                ms / std::max(flop_floor, write_floor),
                ms / std::max(exec_floor, write_floor));
            }
        }
      GPU_ASSEMBLY_CHECK_CUDA(cudaEventDestroy(start));
      GPU_ASSEMBLY_CHECK_CUDA(cudaEventDestroy(stop));
    }
  catch (const std::exception &exc)
    {
      std::cerr << "hex8_local_matrices failed: " << exc.what() << std::endl;
      return 1;
    }
  return 0;
}
