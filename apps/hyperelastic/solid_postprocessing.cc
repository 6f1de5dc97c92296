// SPDX-License-Identifier: LGPL-2.1-or-later
// HyperelasticSolid's postprocessing: the state, energies and momentum
// for the summary and the tests, the cell fields and the worst element
// for output and failure reports, and the VTU/PVD output.

#include <deal.II/base/data_out_base.h>

#include <deal.II/fe/fe_values.h>

#include <deal.II/lac/vector.h>

#include <deal.II/numerics/data_out.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>

#include "../common/app_utilities.h"
#include "hyperelastic_solid.h"
#include "solid_common.h"

namespace Hyperelastic
{
  std::pair<std::vector<double>, std::vector<double>>
  HyperelasticSolid::state() const
  {
    std::pair<std::vector<double>, std::vector<double>> result;
    backend->get_state(result.first, result.second);
    return result;
  }



  double
  HyperelasticSolid::kinetic_energy(const std::vector<double> &p) const
  {
    double energy = 0;
    for (unsigned int i = 0; i < p.size(); ++i)
      energy += 0.5 * p[i] * p[i] / backend_data.lumped_mass[i];
    return energy;
  }



  Tensor<1, HyperelasticSolid::dim>
  HyperelasticSolid::linear_momentum(const std::vector<double> &p) const
  {
    const GPUAssembly::MeshArrays &a = adapter.get_arrays();
    Tensor<1, dim>                 momentum;
    for (unsigned int n = 0; n < a.n_nodes; ++n)
      for (unsigned int c = 0; c < dim; ++c)
        momentum[c] += p[a.node_dofs[n * dim + c]];
    return momentum;
  }



  Tensor<1, HyperelasticSolid::dim>
  HyperelasticSolid::load_region_displacement(
    const std::vector<double> &u) const
  {
    const GPUAssembly::MeshArrays &a = adapter.get_arrays();
    Tensor<1, dim>                 mean;
    for (const unsigned int n : loaded_nodes)
      for (unsigned int c = 0; c < dim; ++c)
        mean[c] += u[a.node_dofs[n * dim + c]];
    return loaded_nodes.empty() ? mean : mean / double(loaded_nodes.size());
  }



  double
  HyperelasticSolid::strain_energy(const std::vector<double> &u_values) const
  {
    const Vector<double>             u(u_values.begin(), u_values.end());
    FEValues<dim>                    fe_values(*mapping,
                            *fe,
                            *quadrature,
                            update_gradients | update_JxW_values);
    const FEValuesExtractors::Vector displacement(0);
    std::vector<Tensor<2, dim>>      grad_u(quadrature->size());
    const double                     mu     = parameters.material.mu;
    const double                     lambda = parameters.material.lambda;
    double                           energy = 0;
    for (const auto &cell : dof_handler.active_cell_iterators())
      {
        fe_values.reinit(cell);
        fe_values[displacement].get_function_gradients(u, grad_u);
        for (unsigned int q = 0; q < quadrature->size(); ++q)
          {
            const Tensor<2, dim> F = unit_symmetric_tensor<dim>() + grad_u[q];
            energy += strain_energy_density(F, mu, lambda) * fe_values.JxW(q);
          }
      }
    return energy;
  }



  void
  HyperelasticSolid::compute_cell_fields(const std::vector<double> &u_values,
                                         Vector<double>            &J_cells,
                                         Vector<double> &von_mises) const
  {
    const Vector<double> u(u_values.begin(), u_values.end());
    J_cells.reinit(triangulation.n_active_cells());
    von_mises.reinit(triangulation.n_active_cells());
    FEValues<dim>                    fe_values(*mapping,
                            *fe,
                            *quadrature,
                            update_gradients | update_JxW_values);
    const FEValuesExtractors::Vector displacement(0);
    std::vector<Tensor<2, dim>>      grad_u(quadrature->size());
    const double                     mu     = parameters.material.mu;
    const double                     lambda = parameters.material.lambda;
    for (const auto &cell : dof_handler.active_cell_iterators())
      {
        fe_values.reinit(cell);
        fe_values[displacement].get_function_gradients(u, grad_u);
        double volume = 0, J_sum = 0, mises_sum = 0;
        for (unsigned int q = 0; q < quadrature->size(); ++q)
          {
            const Tensor<2, dim> F   = unit_symmetric_tensor<dim>() + grad_u[q];
            const double         J   = determinant(F);
            const double         JxW = fe_values.JxW(q);
            volume += JxW;
            J_sum += J * JxW;
            mises_sum += von_mises_stress(F, mu, lambda) * JxW;
          }
        J_cells[cell->active_cell_index()]   = J_sum / volume;
        von_mises[cell->active_cell_index()] = mises_sum / volume;
      }
  }



  std::pair<double, std::string>
  HyperelasticSolid::find_worst_element(
    const std::vector<double> &u_values) const
  {
    const Vector<double> u(u_values.begin(), u_values.end());
    FEValues<dim> fe_values(*mapping, *fe, *quadrature, update_gradients);
    const FEValuesExtractors::Vector displacement(0);
    std::vector<Tensor<2, dim>>      grad_u(quadrature->size());
    double                           J_min = std::numeric_limits<double>::max();
    std::string                      where;
    for (const auto &cell : dof_handler.active_cell_iterators())
      {
        fe_values.reinit(cell);
        fe_values[displacement].get_function_gradients(u, grad_u);
        for (unsigned int q = 0; q < quadrature->size(); ++q)
          {
            const double J =
              determinant(unit_symmetric_tensor<dim>() + grad_u[q]);
            if (J < J_min || !std::isfinite(J))
              {
                J_min = J;
                std::ostringstream text;
                text << "element " << cell->active_cell_index()
                     << " (reference centre " << cell->center() << ')';
                where = text.str();
              }
          }
      }
    return {J_min, where};
  }



  void
  HyperelasticSolid::write_output(const std::vector<double> &u_values,
                                  const std::vector<double> &p_values,
                                  const unsigned int         number)
  {
    TimerOutput::Scope scope(timer, "Output");
    const auto        &o = parameters.output;
    {
      std::error_code error;
      std::filesystem::create_directories(o.directory, error);
      AssertThrow(!error,
                  ExcMessage("'Output/Directory' = '" + o.directory +
                             "' cannot be created: " + error.message() + "."));
    }

    const Vector<double> u(u_values.begin(), u_values.end());
    Vector<double>       v(u.size());
    for (unsigned int i = 0; i < v.size(); ++i)
      v[i] = p_values[i] / backend_data.lumped_mass[i];
    Vector<double> J, von_mises;
    compute_cell_fields(u_values, J, von_mises);

    DataOut<dim> data_out;
    add_displacement_and_velocity(data_out, dof_handler, u, v);
    add_J_and_von_mises(data_out, J, von_mises);
    data_out.build_patches(*mapping);

    std::ostringstream name;
    name << o.base_name << '-' << std::setw(5) << std::setfill('0') << number
         << ".vtu";
    const std::string path = o.directory + "/" + name.str();
    AppUtilities::write_file(path, [&](std::ostream &out) {
      data_out.write_vtu(out);
    });
    stats.output_files.push_back(path);

    auto records = pvd_records;
    records.emplace_back(time, name.str());
    AppUtilities::write_file(o.directory + "/" + o.base_name + ".pvd",
                             [&](std::ostream &out) {
                               DataOutBase::write_pvd_record(out, records);
                             });
    pvd_records = records;
  }
} // namespace Hyperelastic
