// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>

#include <gpu_assembly/kernels/hex8_elasticity.h>

#include <algorithm>
#include <cmath>

namespace GPUAssembly
{
  std::string
  to_string(const ElementStrategy strategy)
  {
    switch (strategy)
      {
        case ElementStrategy::thread_per_element:
          return "thread-per-element";
        case ElementStrategy::shape_map:
          return "shapeMap";
        case ElementStrategy::shape_map_per_entry:
          return "shapeMap-per-entry";
        case ElementStrategy::standard:
          return "standard";
      }
    return "unknown";
  }



  ElementStrategy
  parse_element_strategy(const std::string &name)
  {
    for (const auto strategy : {ElementStrategy::thread_per_element,
                                ElementStrategy::shape_map,
                                ElementStrategy::shape_map_per_entry,
                                ElementStrategy::standard})
      if (name == to_string(strategy))
        return strategy;
    AssertThrow(false,
                dealii::ExcMessage("Unknown element strategy '" + name +
                                   "'; choose thread-per-element, shapeMap, "
                                   "shapeMap-per-entry or standard."));
    return ElementStrategy::thread_per_element;
  }



  namespace
  {
    void
    check_hexahedral_layout(const MeshArrays &arrays, const std::string &who)
    {
      const ElementLayout &layout = arrays.layout;
      AssertThrow(arrays.dim == 3 && !layout.is_simplex && layout.degree == 1 &&
                    layout.n_nodes == Hex8::n_nodes &&
                    layout.n_components == Hex8::n_components,
                  dealii::ExcMessage(
                    who +
                    " needs trilinear hexahedra with 3 components "
                    "(FESystem of 3 FE_Q<3>(1)); the mesh arrays have dim " +
                    std::to_string(arrays.dim) + ", " +
                    std::to_string(layout.n_nodes) + " nodes and " +
                    std::to_string(layout.n_components) +
                    " components per element" +
                    (layout.is_simplex ? " (simplices)." : ".")));
      AssertThrow(arrays.supplemental_format ==
                      SupplementalDataFormat::quadrature_gradients &&
                    arrays.n_supplemental >= Hex8::n_geometry_values,
                  dealii::ExcMessage(who +
                                     " needs the supplemental data format "
                                     "quadrature_gradients."));
    }
  } // namespace



  void
  append_element_material(MeshArrays                &arrays,
                          const std::vector<double> &youngs_modulus,
                          const std::vector<double> &poissons_ratio)
  {
    check_hexahedral_layout(arrays, "append_element_material()");
    AssertThrow(arrays.n_supplemental == Hex8::n_geometry_values,
                dealii::ExcMessage(
                  "append_element_material(): the supplemental data already "
                  "has " +
                  std::to_string(arrays.n_supplemental) +
                  " values per element instead of " +
                  std::to_string(Hex8::n_geometry_values) +
                  "; a material can be appended once."));
    AssertThrow(
      youngs_modulus.size() == arrays.n_elements &&
        poissons_ratio.size() == arrays.n_elements,
      dealii::ExcMessage(
        "append_element_material(): " + std::to_string(youngs_modulus.size()) +
        " Young's moduli and " + std::to_string(poissons_ratio.size()) +
        " Poisson's ratios for " + std::to_string(arrays.n_elements) +
        " elements."));
    for (unsigned int e = 0; e < arrays.n_elements; ++e)
      AssertThrow(youngs_modulus[e] > 0 && poissons_ratio[e] > -1 &&
                    poissons_ratio[e] < 0.5,
                  dealii::ExcMessage(
                    "append_element_material(): element " + std::to_string(e) +
                    " has E = " + std::to_string(youngs_modulus[e]) +
                    " and nu = " + std::to_string(poissons_ratio[e]) +
                    "; E must be positive and -1 < nu < 0.5."));

    const unsigned int  n_old = arrays.n_supplemental;
    const unsigned int  n_new = n_old + 2;
    std::vector<double> supplemental(static_cast<std::size_t>(n_new) *
                                     arrays.n_elements);
    for (std::size_t e = 0; e < arrays.n_elements; ++e)
      {
        std::copy(arrays.supplemental.begin() + e * n_old,
                  arrays.supplemental.begin() + (e + 1) * n_old,
                  supplemental.begin() + e * n_new);
        supplemental[e * n_new + n_old]     = youngs_modulus[e];
        supplemental[e * n_new + n_old + 1] = poissons_ratio[e];
      }
    arrays.supplemental.swap(supplemental);
    arrays.n_supplemental = n_new;
  }



  void
  verify_hex8_arrays(const MeshArrays &arrays)
  {
    check_hexahedral_layout(arrays, "The hex8 element kernels");
    const ElementLayout &layout = arrays.layout;
    bool                 gauss  = layout.n_q_points == Hex8::n_q_points &&
                 layout.shape_values.size() == Hex8::n_q_points * Hex8::n_nodes;
    for (unsigned int q = 0; gauss && q < Hex8::n_q_points; ++q)
      {
        gauss = std::abs(layout.quadrature_weights[q] - 0.125) < 1e-14;
        for (unsigned int a = 0; a < Hex8::n_nodes; ++a)
          gauss =
            gauss && std::abs(layout.shape_values[q * Hex8::n_nodes + a] -
                              Hex8::reference_value<double>(a, q)) < 1e-14;
      }
    AssertThrow(gauss,
                dealii::ExcMessage(
                  "The hex8 element kernels integrate with the 2x2x2 Gauss "
                  "rule; the mesh arrays were built with another quadrature "
                  "(use QGauss<3>(2))."));

    // The block kernels compute the geometry from the nodal coordinates:
    // they must reproduce what the adapter's Mapping put into S(e).
    for (unsigned int e = 0; e < arrays.n_elements; ++e)
      {
        const std::size_t first = static_cast<std::size_t>(e) * Hex8::n_nodes;
        const auto        x = [&](const unsigned int a, const unsigned int d) {
          return arrays
            .nodal_coordinates[arrays.connectivity[first + a] * 3 + d];
        };
        const double *S = arrays.supplemental.data() +
                          static_cast<std::size_t>(e) * arrays.n_supplemental;
        double jxw_difference = 0, difference = 0, size = 0;
        for (unsigned int q = 0; q < Hex8::n_q_points; ++q)
          {
            const double *Sq = S + q * (1 + Hex8::n_nodes * 3);
            double        gradients[Hex8::n_nodes][3];
            const double  JxW = Hex8::compute_geometry<double>(
              x,
              q,
              [&](const unsigned int a, const unsigned int k) -> double  &{
                return gradients[a][k];
              });
            jxw_difference =
              std::max(jxw_difference, std::abs(JxW - Sq[0]) / std::abs(Sq[0]));
            for (unsigned int a = 0; a < Hex8::n_nodes; ++a)
              for (unsigned int k = 0; k < 3; ++k)
                {
                  difference =
                    std::max(difference,
                             std::abs(gradients[a][k] - Sq[1 + a * 3 + k]));
                  size = std::max(size, std::abs(Sq[1 + a * 3 + k]));
                }
          }
        const double relative = std::max(jxw_difference, difference / size);
        AssertThrow(relative <= 1e-10,
                    dealii::ExcMessage(
                      "The hex8 element kernels compute the geometry of "
                      "element " +
                      std::to_string(e) +
                      " from its nodal coordinates with the trilinear map, "
                      "which does not reproduce its supplemental data "
                      "(relative difference " +
                      std::to_string(relative) +
                      "): build the mesh arrays with MappingQ(1) on cells "
                      "without curved manifolds."));
      }
  }
} // namespace GPUAssembly
