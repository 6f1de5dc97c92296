// SPDX-License-Identifier: LGPL-2.1-or-later
// The TLED model: reference gradients, volumes, hourglass data, lumped
// mass, nodal-sum lists and the stable time step; the host's energies and
// internal forces. Compiled with -ffp-contract=off (plugin/CMakeLists.txt)
// since internal_forces() must reproduce the steppers' forces exactly.

#include <deal.II/base/exceptions.h>
#include <deal.II/base/parallel.h>

#include <gpu_assembly/tled/tled_element.h>
#include <gpu_assembly/tled/tled_model.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

#include "element_force_loop.h"

namespace GPUAssembly
{
  namespace TLED
  {
    namespace
    {
      using Vec3 = std::array<double, 3>;

      Vec3
      cross(const Vec3 &a, const Vec3 &b)
      {
        return {{a[1] * b[2] - a[2] * b[1],
                 a[2] * b[0] - a[0] * b[2],
                 a[0] * b[1] - a[1] * b[0]}};
      }

      double
      norm(const Vec3 &a)
      {
        return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
      }

      Vec3
      difference(const Vec3 &a, const Vec3 &b)
      {
        return {{a[0] - b[0], a[1] - b[1], a[2] - b[2]}};
      }

      // det and inverse transpose of a 3x3 matrix.
      double
      invert_transpose(const double (&J)[3][3], double (&J_inv_T)[3][3])
      {
        double cof[3][3];
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            {
              const int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3,
                        j2 = (j + 2) % 3;
              cof[i][j]    = J[i1][j1] * J[i2][j2] - J[i1][j2] * J[i2][j1];
            }
        const double det =
          J[0][0] * cof[0][0] + J[0][1] * cof[0][1] + J[0][2] * cof[0][2];
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            J_inv_T[i][j] = cof[i][j] / det;
        return det;
      }

      std::string
      describe_element(const Mesh &mesh, const unsigned int e)
      {
        std::ostringstream out;
        out << "element " << e << " (nodes";
        const unsigned int npe = mesh.nodes_per_element();
        for (unsigned int a = 0; a < npe; ++a)
          {
            const unsigned int n = mesh.cells[e * npe + a];
            out << ' ' << n << " at (" << mesh.coordinates[3 * n] << ", "
                << mesh.coordinates[3 * n + 1] << ", "
                << mesh.coordinates[3 * n + 2] << ")";
          }
        out << ")";
        return out.str();
      }

      // Gradients b[a][K], volume and characteristic length of element e.
      template <int npe>
      void
      reference_geometry(const Mesh        &mesh,
                         const Material    &material,
                         const unsigned int e,
                         double (&b)[npe][3],
                         double &volume,
                         double &length)
      {
        Vec3 X[npe];
        for (int a = 0; a < npe; ++a)
          for (int d = 0; d < 3; ++d)
            X[a][d] = mesh.coordinates[3 * mesh.cells[e * npe + a] + d];
        if constexpr (npe == 4)
          {
            double J[3][3], J_inv_T[3][3];
            for (int i = 0; i < 3; ++i)
              for (int k = 0; k < 3; ++k)
                J[i][k] = X[k + 1][i] - X[0][i];
            const double det = invert_transpose(J, J_inv_T);
            AssertThrow(det > 0,
                        dealii::ExcMessage(
                          "The tetrahedral " + describe_element(mesh, e) +
                          " is inverted or flat (det = " + std::to_string(det) +
                          "): TLED needs positively "
                          "oriented elements."));
            const double dN[4][3] = {{-1, -1, -1},
                                     {1, 0, 0},
                                     {0, 1, 0},
                                     {0, 0, 1}};
            for (int a = 0; a < 4; ++a)
              for (int K = 0; K < 3; ++K)
                b[a][K] = J_inv_T[K][0] * dN[a][0] + J_inv_T[K][1] * dN[a][1] +
                          J_inv_T[K][2] * dN[a][2];
            volume = det / 6.;
            // The smallest height: 3 V over the largest face area.
            const int faces[4][3] = {{1, 2, 3},
                                     {0, 2, 3},
                                     {0, 1, 3},
                                     {0, 1, 2}};
            double    max_area    = 0;
            for (const auto &f : faces)
              max_area =
                std::max(max_area,
                         0.5 * norm(cross(difference(X[f[1]], X[f[0]]),
                                          difference(X[f[2]], X[f[0]]))));
            length = 3. * volume / max_area;
          }
        else
          {
            // Volume averages over the trilinear geometry by the 2x2x2
            // Gauss rule, which integrates det J and cof(J)^T grad_xi N
            // exactly.
            for (int a = 0; a < 8; ++a)
              b[a][0] = b[a][1] = b[a][2] = 0;
            volume               = 0;
            const double g[2]    = {0.5 - 0.5 / std::sqrt(3.),
                                    0.5 + 0.5 / std::sqrt(3.)};
            double       min_det = std::numeric_limits<double>::max();
            for (int q = 0; q < 8; ++q)
              {
                const double xi[3] = {g[q & 1],
                                      g[(q >> 1) & 1],
                                      g[(q >> 2) & 1]};
                double       dN[8][3];
                for (int a = 0; a < 8; ++a)
                  for (int d = 0; d < 3; ++d)
                    {
                      double value = 1;
                      for (int k = 0; k < 3; ++k)
                        {
                          const bool high = (a >> k) & 1;
                          if (k == d)
                            value *= high ? 1. : -1.;
                          else
                            value *= high ? xi[k] : 1. - xi[k];
                        }
                      dN[a][d] = value;
                    }
                double J[3][3] = {}, J_inv_T[3][3];
                for (int a = 0; a < 8; ++a)
                  for (int i = 0; i < 3; ++i)
                    for (int k = 0; k < 3; ++k)
                      J[i][k] += X[a][i] * dN[a][k];
                const double det = invert_transpose(J, J_inv_T);
                min_det          = std::min(min_det, det);
                const double w   = det / 8.;
                volume += w;
                for (int a = 0; a < 8; ++a)
                  for (int K = 0; K < 3; ++K)
                    b[a][K] +=
                      w * (J_inv_T[K][0] * dN[a][0] + J_inv_T[K][1] * dN[a][1] +
                           J_inv_T[K][2] * dN[a][2]);
              }
            AssertThrow(min_det > 0,
                        dealii::ExcMessage(
                          "The hexahedral " + describe_element(mesh, e) +
                          " is inverted or degenerate (det J = " +
                          std::to_string(min_det) +
                          " at a Gauss point): TLED needs elements with a "
                          "positive Jacobian, vertices in deal.II's order."));
            for (int a = 0; a < 8; ++a)
              for (int K = 0; K < 3; ++K)
                b[a][K] /= volume;
            const int faces[6][4] = {{0, 2, 4, 6},
                                     {1, 3, 5, 7},
                                     {0, 1, 4, 5},
                                     {2, 3, 6, 7},
                                     {0, 1, 2, 3},
                                     {4, 5, 6, 7}};
            double    max_area    = 0;
            for (const auto &f : faces)
              max_area =
                std::max(max_area,
                         0.5 * norm(cross(difference(X[f[3]], X[f[0]]),
                                          difference(X[f[2]], X[f[1]]))));
            // The hourglass stiffness adds up to kappa times the element's
            // dilatational stiffness to its highest modes.
            length = volume / max_area /
                     std::sqrt(1. + material.hourglass_coefficient);
          }
      }

      template <int npe, typename Number>
      std::vector<double>
      internal_forces_of(const Model<Number>       &model,
                         const std::vector<double> &u)
      {
        const std::size_t   s = model.element_stride;
        std::vector<Number> fe(3 * npe * s, Number(0));
        dealii::parallel::apply_to_subranges(
          0u,
          model.n_elements,
          [&](const unsigned int begin, const unsigned int end) {
            internal::element_force_loop<npe>(
              model,
              [&](const int n, const int i) {
                return Number(u[3 * std::size_t(n) + i]);
              },
              fe.data(),
              begin,
              end);
          },
          256);
        std::vector<double> result(3 * std::size_t(model.n_nodes));
        for (unsigned int n = 0; n < model.n_nodes; ++n)
          for (int i = 0; i < 3; ++i)
            {
              const int j0  = model.node_offsets[n];
              Number    sum = fe[model.node_entries[j0] + i * s];
              for (int j = j0 + 1; j < model.node_offsets[n + 1]; ++j)
                sum = sum + fe[model.node_entries[j] + i * s];
              result[3 * std::size_t(n) + i] = sum;
            }
        return result;
      }

      // W(F) V + hourglass energy of element e, in double; J in @p J.
      template <int npe, typename Number>
      double
      element_energy(const Model<Number>       &model,
                     const std::vector<double> &u,
                     const unsigned int         e,
                     double                    &J)
      {
        const std::size_t s = model.element_stride;
        double            ue[npe][3], b[npe][3];
        for (int a = 0; a < npe; ++a)
          {
            const int n = model.connectivity[a * s + e];
            for (int i = 0; i < 3; ++i)
              {
                ue[a][i] = u[3 * std::size_t(n) + i];
                b[a][i]  = model.shape_gradients[(3 * a + i) * s + e];
              }
          }
        // From H = grad u rather than F = I + H, so that small strains
        // lose no digits: tr C - 3 = 2 tr H + |H|^2 and
        // J - 1 = tr H + (second invariant of H) + det H.
        double H[3][3];
        for (int i = 0; i < 3; ++i)
          for (int K = 0; K < 3; ++K)
            {
              H[i][K] = 0;
              for (int a = 0; a < npe; ++a)
                H[i][K] += ue[a][i] * b[a][K];
            }
        const double trace_H = H[0][0] + H[1][1] + H[2][2];
        double       norm2_H = 0;
        for (int i = 0; i < 3; ++i)
          for (int K = 0; K < 3; ++K)
            norm2_H += H[i][K] * H[i][K];
        const double minors = H[0][0] * H[1][1] - H[0][1] * H[1][0] +
                              H[0][0] * H[2][2] - H[0][2] * H[2][0] +
                              H[1][1] * H[2][2] - H[1][2] * H[2][1];
        const double det_H = H[0][0] * (H[1][1] * H[2][2] - H[1][2] * H[2][1]) -
                             H[0][1] * (H[1][0] * H[2][2] - H[1][2] * H[2][0]) +
                             H[0][2] * (H[1][0] * H[2][1] - H[1][1] * H[2][0]);
        const double J_minus_1 = trace_H + minors + det_H;
        J                      = 1. + J_minus_1;
        const double mu = model.mu, lambda = model.lambda;
        const double log_J = J > 0 ? std::log1p(J_minus_1) :
                                     std::numeric_limits<double>::quiet_NaN();
        // mu/2 (tr C - 3) - mu ln J = mu (tr H - ln J) + mu/2 |H|^2.
        double energy = double(model.volumes[e]) *
                        (mu * (trace_H - log_J) + 0.5 * mu * norm2_H +
                         0.5 * lambda * log_J * log_J);
        if constexpr (npe == 8)
          {
            const double k = model.hourglass[12 * s + e];
            for (int alpha = 0; alpha < 4; ++alpha)
              {
                double q[3] = {0, 0, 0};
                for (int a = 0; a < 8; ++a)
                  {
                    const int sx = (a & 1) ? 1 : -1, sy = (a & 2) ? 1 : -1,
                              sz    = (a & 4) ? 1 : -1;
                    const int h[4]  = {sy * sz, sx * sz, sx * sy, sx * sy * sz};
                    double    gamma = h[alpha];
                    for (int K = 0; K < 3; ++K)
                      gamma -=
                        double(model.hourglass[(3 * alpha + K) * s + e]) *
                        b[a][K];
                    for (int i = 0; i < 3; ++i)
                      q[i] += gamma * ue[a][i];
                  }
                energy += 0.5 * k * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
              }
          }
        return energy;
      }
    } // namespace



    double
    Material::wave_speed() const
    {
      return std::sqrt((lambda + 2. * mu) / density);
    }



    template <typename Number>
    std::size_t
    Model<Number>::bytes_per_step() const
    {
      const std::size_t s = sizeof(Number), e = n_elements, n = n_nodes;
      const std::size_t element_forces = 2 * e * 3 * nodes_per_element * s;
      const std::size_t lists          = 4 * (n + 1 + node_entries.size());
      // Beyond the floor: u_n read a second time (by the elements and by
      // the update).
      return minimum_bytes_per_step() + element_forces + lists + n * 3 * s;
    }



    template <typename Number>
    std::size_t
    Model<Number>::minimum_bytes_per_step() const
    {
      const std::size_t s = sizeof(Number), n = n_nodes;
      const std::size_t element_arrays = n_elements * bytes_per_element();
      // u_n and u_{n-1} read, u_{n+1} written, the update coefficient and
      // the flags.
      const std::size_t nodal = n * (3 * 3 * s + s + 1);
      return element_arrays + nodal;
    }



    template <typename Number>
    std::size_t
    Model<Number>::bytes_per_element() const
    {
      const std::size_t s = sizeof(Number);
      return nodes_per_element * 4 + 3 * nodes_per_element * s + s +
             (element_type == ElementType::hexahedron ? 13 * s : 0);
    }



    template <typename Number>
    Model<Number>
    make_model(const Mesh &mesh, const Material &material)
    {
      const unsigned int npe = mesh.nodes_per_element();
      AssertThrow(mesh.coordinates.size() % 3 == 0 &&
                    mesh.cells.size() % npe == 0 && !mesh.cells.empty(),
                  dealii::ExcMessage(
                    "A TLED mesh needs 3 coordinates per node and " +
                    std::to_string(npe) +
                    " nodes per element, and at least "
                    "one element."));
      AssertThrow(material.mu > 0 && material.lambda > -2. / 3. * material.mu &&
                    material.density > 0 && material.hourglass_coefficient >= 0,
                  dealii::ExcMessage(
                    "TLED needs mu > 0, lambda > -2 mu / 3, a positive "
                    "density and a hourglass coefficient >= 0."));
      Model<Number> model;
      model.element_type      = mesh.element_type;
      model.nodes_per_element = npe;
      model.n_nodes           = mesh.n_nodes();
      model.n_elements        = mesh.n_elements();
      model.element_stride    = (model.n_elements + 31) / 32 * 32;
      model.node_stride       = (model.n_nodes + 31) / 32 * 32;
      model.mu                = Number(material.mu);
      model.lambda            = Number(material.lambda);
      model.coordinates       = mesh.coordinates;
      const std::size_t s     = model.element_stride;

      std::vector<unsigned int> uses(model.n_nodes, 0);
      for (unsigned int e = 0; e < model.n_elements; ++e)
        for (unsigned int a = 0; a < npe; ++a)
          {
            const unsigned int n = mesh.cells[e * npe + a];
            AssertThrow(n < model.n_nodes,
                        dealii::ExcMessage(
                          "Element " + std::to_string(e) + " names node " +
                          std::to_string(n) + ", but the mesh has " +
                          std::to_string(model.n_nodes) + " nodes."));
            ++uses[n];
          }
      for (unsigned int n = 0; n < model.n_nodes; ++n)
        AssertThrow(uses[n] > 0,
                    dealii::ExcMessage("Node " + std::to_string(n) +
                                       " belongs to no element: TLED needs "
                                       "every node to have a mass."));

      model.connectivity.assign(npe * s, 0);
      model.shape_gradients.assign(3 * npe * s, Number(0));
      model.volumes.assign(s, Number(0));
      if (npe == 8)
        model.hourglass.assign(13 * s, Number(0));
      model.lumped_mass.assign(model.n_nodes, 0.);
      std::vector<double> lengths(model.n_elements);
      std::vector<double> volumes(model.n_elements);

      dealii::parallel::apply_to_subranges(
        0u,
        model.n_elements,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int e = begin; e < end; ++e)
            {
              for (unsigned int a = 0; a < npe; ++a)
                model.connectivity[a * s + e] = mesh.cells[e * npe + a];
              if (npe == 4)
                {
                  double b[4][3];
                  reference_geometry<4>(mesh,
                                        material,
                                        e,
                                        b,
                                        volumes[e],
                                        lengths[e]);
                  for (int a = 0; a < 4; ++a)
                    for (int K = 0; K < 3; ++K)
                      model.shape_gradients[(3 * a + K) * s + e] = b[a][K];
                }
              else
                {
                  double b[8][3];
                  reference_geometry<8>(mesh,
                                        material,
                                        e,
                                        b,
                                        volumes[e],
                                        lengths[e]);
                  double b2 = 0;
                  for (int a = 0; a < 8; ++a)
                    for (int K = 0; K < 3; ++K)
                      {
                        model.shape_gradients[(3 * a + K) * s + e] = b[a][K];
                        b2 += b[a][K] * b[a][K];
                      }
                  for (int alpha = 0; alpha < 4; ++alpha)
                    for (int K = 0; K < 3; ++K)
                      {
                        double c = 0;
                        for (int a = 0; a < 8; ++a)
                          {
                            const int sx   = (a & 1) ? 1 : -1,
                                      sy   = (a & 2) ? 1 : -1,
                                      sz   = (a & 4) ? 1 : -1;
                            const int h[4] = {sy * sz,
                                              sx * sz,
                                              sx * sy,
                                              sx * sy * sz};
                            c +=
                              h[alpha] *
                              mesh.coordinates[3 * mesh.cells[e * 8 + a] + K];
                          }
                        model.hourglass[(3 * alpha + K) * s + e] = c;
                      }
                  model.hourglass[12 * s + e] =
                    material.hourglass_coefficient *
                    (material.lambda + 2. * material.mu) * volumes[e] * b2 / 8.;
                }
              model.volumes[e] = volumes[e];
            }
        },
        256);

      for (unsigned int e = 0; e < model.n_elements; ++e)
        for (unsigned int a = 0; a < npe; ++a)
          model.lumped_mass[mesh.cells[e * npe + a]] +=
            material.density * volumes[e] / npe;

      // Nodal-sum lists, sorted by element and local node by construction.
      model.node_offsets.assign(model.n_nodes + 1, 0);
      for (unsigned int n = 0; n < model.n_nodes; ++n)
        model.node_offsets[n + 1] = model.node_offsets[n] + uses[n];
      model.node_entries.resize(model.node_offsets.back());
      std::vector<int> fill(model.node_offsets.begin(),
                            model.node_offsets.end() - 1);
      for (unsigned int e = 0; e < model.n_elements; ++e)
        for (unsigned int a = 0; a < npe; ++a)
          model.node_entries[fill[mesh.cells[e * npe + a]]++] =
            int(3 * a * s + e);

      const double c           = material.wave_speed();
      model.critical_time_step = std::numeric_limits<double>::max();
      for (unsigned int e = 0; e < model.n_elements; ++e)
        if (lengths[e] / c < model.critical_time_step)
          {
            model.critical_time_step = lengths[e] / c;
            model.critical_element   = e;
          }
      return model;
    }



    template <typename Number>
    void
    check_time_step(const Model<Number> &model, const double time_step)
    {
      AssertThrow(time_step > 0,
                  dealii::ExcMessage("The TLED time step must be positive."));
      std::ostringstream message;
      message << std::setprecision(6) << "The time step " << time_step
              << " exceeds the stable limit " << model.critical_time_step
              << " of the central-difference rule (L_e / c at element "
              << model.critical_element
              << ", L_e its characteristic length, c the dilatational wave "
                 "speed). Choose a time step of at most "
              << model.critical_time_step << '.';
      AssertThrow(time_step <= model.critical_time_step,
                  dealii::ExcMessage(message.str()));
    }



    template <typename Number>
    std::vector<double>
    internal_forces(const Model<Number> &model, const std::vector<double> &u)
    {
      AssertThrow(u.size() == 3 * std::size_t(model.n_nodes),
                  dealii::ExcMessage("internal_forces: u must hold 3 values "
                                     "per node."));
      return model.nodes_per_element == 8 ? internal_forces_of<8>(model, u) :
                                            internal_forces_of<4>(model, u);
    }



    template <typename Number>
    double
    strain_energy(const Model<Number> &model, const std::vector<double> &u)
    {
      double energy = 0, J;
      for (unsigned int e = 0; e < model.n_elements; ++e)
        energy += model.nodes_per_element == 8 ?
                    element_energy<8>(model, u, e, J) :
                    element_energy<4>(model, u, e, J);
      return energy;
    }



    template <typename Number>
    std::pair<double, unsigned int>
    minimum_jacobian(const Model<Number> &model, const std::vector<double> &u)
    {
      std::pair<double, unsigned int> result(std::numeric_limits<double>::max(),
                                             0);
      for (unsigned int e = 0; e < model.n_elements; ++e)
        {
          double J;
          if (model.nodes_per_element == 8)
            element_energy<8>(model, u, e, J);
          else
            element_energy<4>(model, u, e, J);
          if (!(J >= result.first))
            result = {J, e};
        }
      return result;
    }



    template <typename Number>
    double
    discrete_energy(const Model<Number>       &model,
                    const std::vector<double> &u_n,
                    const std::vector<double> &u_n_plus_1,
                    const double               time_step)
    {
      const std::vector<double> f0 = internal_forces(model, u_n),
                                f1 = internal_forces(model, u_n_plus_1);
      double kinetic = 0, correction = 0;
      for (std::size_t i = 0; i < u_n.size(); ++i)
        {
          const double du = u_n_plus_1[i] - u_n[i];
          const double v  = du / time_step;
          kinetic += 0.5 * model.lumped_mass[i / 3] * v * v;
          correction += (f1[i] - f0[i]) * du;
        }
      return kinetic +
             0.5 *
               (strain_energy(model, u_n) + strain_energy(model, u_n_plus_1)) -
             0.25 * correction;
    }



    template struct Model<double>;
    template struct Model<float>;
    template Model<double>
    make_model(const Mesh &, const Material &);
    template Model<float>
    make_model(const Mesh &, const Material &);
    template void
    check_time_step(const Model<double> &, const double);
    template void
    check_time_step(const Model<float> &, const double);
    template std::vector<double>
    internal_forces(const Model<double> &, const std::vector<double> &);
    template std::vector<double>
    internal_forces(const Model<float> &, const std::vector<double> &);
    template double
    strain_energy(const Model<double> &, const std::vector<double> &);
    template double
    strain_energy(const Model<float> &, const std::vector<double> &);
    template std::pair<double, unsigned int>
    minimum_jacobian(const Model<double> &, const std::vector<double> &);
    template std::pair<double, unsigned int>
    minimum_jacobian(const Model<float> &, const std::vector<double> &);
    template double
    discrete_energy(const Model<double> &,
                    const std::vector<double> &,
                    const std::vector<double> &,
                    const double);
    template double
    discrete_energy(const Model<float> &,
                    const std::vector<double> &,
                    const std::vector<double> &,
                    const double);
  } // namespace TLED
} // namespace GPUAssembly
