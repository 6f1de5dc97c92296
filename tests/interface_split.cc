// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The interface/interior split behind DistributedAssembler's overlap of the
// exchange with the local assembly, under mpirun with any number of ranks,
// on p4est meshes with hanging nodes and fully distributed meshes, 2D and
// 3D, with inhomogeneous Dirichlet values:
// - every element is an interface element or an interior element, once;
// - the interface rows are exactly the local rows other ranks own, which
//   are exactly the rows whose values the exchange plan sends;
// - the interior part writes no interface row (its assembly alone, with a
//   mass matrix, whose element entries are all positive, is zero there),
//   and the interface part writes no row outside rows_written;
// - every interface element writes a row other ranks own (each of a sample
//   assembled alone), so that the interface part is no larger than needed;
// - the overlapped assembly into Trilinos equals, bit for bit, the same
//   parts added in the same order and exchanged one after another; the
//   resident target (host mode) equals it bit for bit; and the parts added
//   equal the whole local assembly to 1e-13.

#include <deal.II/base/mpi.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/trilinos_sparse_matrix.h>
#include <deal.II/lac/trilinos_vector.h>

#include <gpu_assembly/distributed/distributed_assembler.h>
#include <gpu_assembly/distributed/distributed_device_matrix.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/interface_split.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <set>
#include <sstream>

#include "distributed_problems.h"
#include "resident_problems.h"

namespace
{
  using namespace Testing;
  using GPUAssembly::index_type;

  constexpr double local_tolerance = 1e-13;
  // Interface elements assembled one by one, at most, per rank.
  constexpr std::size_t n_sampled_elements = 12;

  // The local matrix and right-hand side of @p elements of @p arrays alone,
  // on the host.
  template <int dim, class Kernel>
  void
  assemble_elements(const GPUAssembly::MeshArrays   &arrays,
                    const std::vector<unsigned int> &elements,
                    const Kernel                    &kernel,
                    std::vector<double>             &values,
                    std::vector<double>             &rhs)
  {
    const GPUAssembly::MeshArrays part =
      GPUAssembly::restrict_to_elements(arrays, elements);
    if (elements.empty())
      {
        values.assign(arrays.n_nonzeros(), 0.);
        rhs.assign(arrays.n_dofs, 0.);
        return;
      }
    GPUAssembly::HostAssembler<dim, double> assembler(part);
    assembler.assemble(kernel, values, rhs, GPUAssembly::AssemblyOptions());
  }

  // Whether row @p row of @p values (CSR of @p arrays) holds a nonzero.
  bool
  row_written(const GPUAssembly::MeshArrays &arrays,
              const std::vector<double>     &values,
              const std::vector<double>     &rhs,
              const index_type               row)
  {
    if (rhs[row] != 0.)
      return true;
    for (index_type k = arrays.row_offsets[row];
         k < arrays.row_offsets[row + 1];
         ++k)
      if (values[k] != 0.)
        return true;
    return false;
  }

  template <int dim>
  void
  check_structure(
    const DistributedProblem<dim>                        &problem,
    const GPUAssembly::DistributedAssembler<dim, double> &assembler,
    std::ostringstream                                   &failures)
  {
    const auto                        &adapter = problem.adapter;
    const GPUAssembly::MeshArrays     &arrays  = adapter.get_arrays();
    const GPUAssembly::InterfaceSplit &split = assembler.get_interface_split();

    // A partition of the elements.
    std::vector<unsigned int> all = split.interface_elements;
    all.insert(all.end(),
               split.interior_elements.begin(),
               split.interior_elements.end());
    std::sort(all.begin(), all.end());
    bool partition = all.size() == arrays.n_elements;
    for (std::size_t e = 0; partition && e < all.size(); ++e)
      partition = all[e] == e;
    if (!partition ||
        !std::is_sorted(split.interface_elements.begin(),
                        split.interface_elements.end()) ||
        !std::is_sorted(split.interior_elements.begin(),
                        split.interior_elements.end()))
      failures << " the interface and interior elements are not every "
                  "element once, in increasing order;";

    // The interface rows: the rows not owned, and the rows sent.
    const auto             &local_to_global = adapter.get_local_to_global();
    const IndexSet          owned           = adapter.locally_owned_dofs();
    std::vector<index_type> not_owned;
    for (std::size_t i = 0; i < local_to_global.size(); ++i)
      if (!owned.is_element(local_to_global[i]))
        not_owned.push_back(i);
    if (split.interface_rows != not_owned)
      failures << " the interface rows are not the local rows other ranks "
                  "own;";
    const GPUAssembly::ExchangePlan &plan = assembler.get_exchange_plan();
    const std::set<index_type>       vector_sent(
      plan.vector_lists().send_sources.begin(),
      plan.vector_lists().send_sources.end());
    std::set<index_type> matrix_sent_rows;
    for (const std::size_t k : plan.matrix_lists().send_sources)
      matrix_sent_rows.insert(std::upper_bound(arrays.row_offsets.begin(),
                                               arrays.row_offsets.end(),
                                               static_cast<index_type>(k)) -
                              arrays.row_offsets.begin() - 1);
    const std::set<index_type> interface_rows(split.interface_rows.begin(),
                                              split.interface_rows.end());
    if (vector_sent != interface_rows || matrix_sent_rows != interface_rows)
      failures << " the rows the exchange plan sends are not the interface "
                  "rows;";

    // Where the parts write, from their assemblies with a mass matrix.
    std::vector<double> values, rhs;
    problem.with_kernel([&](const auto &kernel) {
      assemble_elements<dim>(arrays,
                             split.interior_elements,
                             kernel,
                             values,
                             rhs);
    });
    for (const index_type row : split.interface_rows)
      if (row_written(arrays, values, rhs, row))
        {
          failures << " the interior elements write the interface row " << row
                   << ";";
          break;
        }
    problem.with_kernel([&](const auto &kernel) {
      assemble_elements<dim>(arrays,
                             split.interface_elements,
                             kernel,
                             values,
                             rhs);
    });
    const std::set<index_type> written(split.rows_written.begin(),
                                       split.rows_written.end());
    for (index_type row = 0; row < static_cast<index_type>(arrays.n_dofs);
         ++row)
      if (written.count(row) == 0 && row_written(arrays, values, rhs, row))
        {
          failures << " the interface elements write row " << row
                   << ", which rows_written does not list;";
          break;
        }
    std::vector<index_type> nonzeros;
    for (const index_type row : split.rows_written)
      for (index_type k = arrays.row_offsets[row];
           k < arrays.row_offsets[row + 1];
           ++k)
        nonzeros.push_back(k);
    if (nonzeros != split.nonzeros_written)
      failures << " nonzeros_written are not the nonzeros of rows_written;";

    // Each sampled interface element writes an interface row.
    const std::size_t n      = split.interface_elements.size();
    const std::size_t stride = std::max<std::size_t>(1, n / n_sampled_elements);
    for (std::size_t j = 0; j < n; j += stride)
      {
        const unsigned int e = split.interface_elements[j];
        problem.with_kernel([&](const auto &kernel) {
          assemble_elements<dim>(arrays, {e}, kernel, values, rhs);
        });
        if (std::none_of(split.interface_rows.begin(),
                         split.interface_rows.end(),
                         [&](const index_type row) {
                           return row_written(arrays, values, rhs, row);
                         }))
          {
            failures << " the interface element " << e
                     << " writes no row other ranks own;";
            break;
          }
      }
  }

  template <int dim>
  void
  check_values(const DistributedProblem<dim> &problem,
               TrilinosTarget<dim>           &trilinos,
               std::ostringstream            &failures)
  {
    const auto                        &adapter = problem.adapter;
    const GPUAssembly::MeshArrays     &arrays  = adapter.get_arrays();
    const GPUAssembly::InterfaceSplit &split =
      trilinos.assembler.get_interface_split();

    // The same parts, added in the same order, then exchanged.
    std::vector<double> local, local_rhs, part, part_rhs;
    problem.with_kernel([&](const auto &kernel) {
      assemble_elements<dim>(arrays,
                             split.interior_elements,
                             kernel,
                             local,
                             local_rhs);
      assemble_elements<dim>(arrays,
                             split.interface_elements,
                             kernel,
                             part,
                             part_rhs);
    });
    for (const index_type k : split.nonzeros_written)
      local[k] += part[k];
    for (const index_type row : split.rows_written)
      local_rhs[row] += part_rhs[row];
    const auto same_bits = [](const std::vector<double> &a,
                              const std::vector<double> &b) {
      return a.size() == b.size() &&
             std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
    };
    if (!same_bits(local, trilinos.assembler.get_local_matrix_values()) ||
        !same_bits(local_rhs, trilinos.assembler.get_local_rhs()))
      failures << " the overlapped local matrix or right-hand side differs "
                  "from its parts added in order;";

    TrilinosWrappers::SparseMatrix matrix;
    matrix.copy_from(trilinos.matrix);
    TrilinosWrappers::MPI::Vector    rhs(trilinos.rhs);
    const GPUAssembly::ExchangePlan &plan =
      trilinos.assembler.get_exchange_plan();
    plan.exchange_matrix(local.data(),
                         GPUAssembly::internal::TrilinosTarget::values(matrix));
    plan.exchange_vector(local_rhs.data(), rhs.begin());
    const std::size_t n_values =
      GPUAssembly::internal::TrilinosTarget::n_values(matrix);
    if (std::memcmp(GPUAssembly::internal::TrilinosTarget::values(matrix),
                    GPUAssembly::internal::TrilinosTarget::values(
                      trilinos.matrix),
                    n_values * sizeof(double)) != 0 ||
        std::memcmp(rhs.begin(),
                    trilinos.rhs.begin(),
                    rhs.locally_owned_size() * sizeof(double)) != 0)
      failures << " the overlapped assembly into Trilinos differs in bits "
                  "from the exchange after the local assembly;";

    // The resident target, host mode.
    const IndexSet owned = adapter.locally_owned_dofs();
    GPUAssembly::DistributedDeviceMatrix<double> A;
    A.reinit(adapter);
    GPUAssembly::DistributedDeviceVector<double> b;
    b.reinit(A.get_partitioner());
    GPUAssembly::DistributedAssembler<dim, double> resident;
    resident.reinit(adapter, A, b);
    problem.with_kernel([&](const auto &kernel) {
      resident.assemble(kernel, A, b);
    });
    TrilinosWrappers::SparseMatrix resident_matrix;
    resident_matrix.reinit(owned, owned, trilinos.dsp, MPI_COMM_WORLD);
    A.copy_to(resident_matrix);
    TrilinosWrappers::MPI::Vector resident_rhs(owned, MPI_COMM_WORLD);
    b.copy_locally_owned_to(resident_rhs);
    resident_rhs -= trilinos.rhs;
    if (matrix_difference(trilinos.matrix, resident_matrix) != 0. ||
        resident_rhs.linfty_norm() != 0.)
      failures << " the resident target differs in bits from the Trilinos "
                  "target;";

    // The parts added against the whole local assembly.
    std::vector<unsigned int> every(arrays.n_elements);
    for (unsigned int e = 0; e < arrays.n_elements; ++e)
      every[e] = e;
    problem.with_kernel([&](const auto &kernel) {
      assemble_elements<dim>(arrays, every, kernel, part, part_rhs);
    });
    double difference = 0, norm = 0;
    for (std::size_t k = 0; k < part.size(); ++k)
      {
        difference += (part[k] - local[k]) * (part[k] - local[k]);
        norm += part[k] * part[k];
      }
    difference = std::sqrt(Utilities::MPI::sum(difference, MPI_COMM_WORLD) /
                           Utilities::MPI::sum(norm, MPI_COMM_WORLD));
    if (!(difference <= local_tolerance))
      failures << " the parts added differ from the whole local assembly by "
               << difference << " (relative), more than 1e-13;";
  }

  template <int dim>
  bool
  run_case(const TriaKind kind, const Form form, const bool hanging_nodes)
  {
    const DistributedProblem<dim> problem(kind, form, 1, hanging_nodes);
    std::ostringstream            failures;
    TrilinosTarget<dim>           trilinos(problem);
    if (form == Form::mass)
      check_structure(problem, trilinos.assembler, failures);
    check_values(problem, trilinos, failures);

    const auto              &split = trilinos.assembler.get_interface_split();
    const unsigned long long n_interface =
      Utilities::MPI::sum<unsigned long long>(split.interface_elements.size(),
                                              MPI_COMM_WORLD);
    const unsigned long long n_elements =
      Utilities::MPI::sum<unsigned long long>(
        problem.adapter.get_arrays().n_elements,
        MPI_COMM_WORLD);
    std::ostringstream line;
    line << dim << "D "
         << (kind == TriaKind::p4est ? "p4est" : "fullydistributed") << " "
         << to_string(form) << (hanging_nodes ? ", hanging nodes" : "") << ", "
         << Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD)
         << " ranks: " << n_interface << " of " << n_elements
         << " elements at the interface; partition, interface rows, parts' "
            "writes and bitwise overlapped result checked";
    return report_on_rank_0(line.str(), failures.str());
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  return exit_code_on_all_ranks([]() {
    bool passed = true;
    passed &= run_case<2>(TriaKind::p4est, Form::mass, true);
    passed &= run_case<2>(TriaKind::fully_distributed, Form::mass, false);
    passed &= run_case<3>(TriaKind::p4est, Form::mass, true);
    passed &= run_case<3>(TriaKind::p4est, Form::elasticity, true);
    passed &= run_case<3>(TriaKind::fully_distributed, Form::laplace, false);
    return passed;
  });
}
