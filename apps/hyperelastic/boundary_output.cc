// SPDX-License-Identifier: LGPL-2.1-or-later
#include "boundary_output.h"

#include <deal.II/base/parallel.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/fe/fe_values.h>

#include <deal.II/numerics/data_out_faces.h>
#include <deal.II/numerics/data_postprocessor.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <sstream>

#include "../common/app_utilities.h"
#include "../common/snapshot_writer.h"
#include "solid_common.h"

namespace Hyperelastic
{
  namespace
  {
    using namespace dealii;

    /// F = I + grad u from the gradients of u's three components.
    Tensor<2, 3>
    deformation_gradient(const Tensor<1, 3> *grad_u)
    {
      Tensor<2, 3> F = unit_symmetric_tensor<3>();
      for (unsigned int i = 0; i < 3; ++i)
        F[i] += grad_u[i];
      return F;
    }

    /// P N, the traction on the face of normal @p N, into @p t[0..2].
    void
    first_piola_traction(const Tensor<2, 3> &F,
                         const Tensor<1, 3> &N,
                         const double        mu,
                         const double        lambda,
                         double             *t)
    {
      const Tensor<1, 3> PN = first_piola_stress(F, mu, lambda) * N;
      for (unsigned int d = 0; d < 3; ++d)
        t[d] = PN[d];
    }

    /// sigma, in the order of DataPostprocessorTensor, into @p s[0..8].
    void
    cauchy_stress_components(const Tensor<2, 3> &F,
                             const double        mu,
                             const double        lambda,
                             double             *s)
    {
      const Tensor<2, 3> sigma = cauchy_stress(F, mu, lambda);
      for (unsigned int i = 0; i < 3; ++i)
        for (unsigned int j = 0; j < 3; ++j)
          s[Tensor<2, 3>::component_to_unrolled_index(TableIndices<2>(i, j))] =
            sigma[i][j];
    }

    /**
     * A field of the deformation gradient F and the face's normal N at
     * each point (normals from DataOutFaces): @p Base is
     * DataPostprocessorVector or DataPostprocessorTensor, @p evaluate writes
     * the point's components.
     */
    template <class Base>
    class StressField : public Base
    {
    public:
      using Evaluate = std::function<
        void(const Tensor<2, 3> &F, const Tensor<1, 3> &N, double *values)>;

      StressField(const std::string &name,
                  const UpdateFlags  flags,
                  const Evaluate    &evaluate)
        : Base(name, flags)
        , evaluate(evaluate)
      {}

      void
      evaluate_vector_field(
        const DataPostprocessorInputs::Vector<3> &inputs,
        std::vector<Vector<double>>              &computed) const override
      {
        for (unsigned int q = 0; q < inputs.solution_gradients.size(); ++q)
          evaluate(deformation_gradient(inputs.solution_gradients[q].data()),
                   inputs.normals.empty() ? Tensor<1, 3>() : inputs.normals[q],
                   computed[q].begin());
      }

    private:
      const Evaluate evaluate;
    };

    /// The fields of the boundary files: the displacement, then P N (3
    /// components) and sigma (9), the rows of a face's patch in this order.
    struct BoundaryFields
    {
      static constexpr unsigned int n_rows = 3 + 3 + 9;

      BoundaryFields(const double mu, const double lambda)
        : traction("first_Piola_traction",
                   update_gradients | update_normal_vectors,
                   [mu, lambda](const Tensor<2, 3> &F,
                                const Tensor<1, 3> &N,
                                double             *t) {
                     first_piola_traction(F, N, mu, lambda, t);
                   })
        , stress("Cauchy_stress",
                 update_gradients,
                 [mu, lambda](const Tensor<2, 3> &F,
                              const Tensor<1, 3> &,
                              double *s) {
                   cauchy_stress_components(F, mu, lambda, s);
                 })
      {}

      /// Adds the fields of @p u to @p data_out (which keeps references to
      /// the postprocessors and @p u until its patches are built).
      template <typename VectorType>
      void
      add(DataOutFaces<3>     &data_out,
          const DoFHandler<3> &dof_handler,
          const VectorType    &u) const
      {
        data_out.attach_dof_handler(dof_handler);
        data_out.add_data_vector(
          u,
          std::vector<std::string>(3, "displacement"),
          DataOutFaces<3>::type_dof_data,
          std::vector<DataComponentInterpretation::DataComponentInterpretation>(
            3,
            DataComponentInterpretation::component_is_part_of_vector));
        data_out.add_data_vector(u, traction);
        data_out.add_data_vector(u, stress);
      }

      const StressField<DataPostprocessorVector<3>> traction;
      const StressField<DataPostprocessorTensor<3>> stress;
    };

    /// The boundary faces' patches with their fields from @p u, handed to
    /// @p write (the postprocessors live until it returns).
    template <typename VectorType>
    void
    write_boundary_faces(const Mapping<3>    &mapping,
                         const DoFHandler<3> &dof_handler,
                         const VectorType    &u,
                         const double         mu,
                         const double         lambda,
                         const std::function<void(DataOutFaces<3> &)> &write)
    {
      const BoundaryFields fields(mu, lambda);
      DataOutFaces<3>      data_out;
      fields.add(data_out, dof_handler, u);
      data_out.build_patches(mapping);
      write(data_out);
    }

    /// DataOutFaces whose patches can be read and overwritten.
    class EditableFaces : public DataOutFaces<3>
    {
    public:
      using DataOutFaces<3>::patches;
    };

    /// The text write_vtu() writes for @p data_out without compression.
    std::string
    uncompressed_vtu(DataOutFaces<3>                     &data_out,
                     const dealii::DataOutBase::VtkFlags &flags)
    {
      DataOutBase::VtkFlags plain = flags;
      plain.compression_level     = DataOutBase::VtkFlags::no_compression;
      data_out.set_flags(plain);
      std::ostringstream out;
      data_out.write_vtu(out);
      return out.str();
    }
  } // namespace



  /// The fixed part of the series: each face's cell DoFs and shape
  /// functions at the face's points, and where each value of the file's
  /// point data comes from.
  struct BoundarySeries::Faces
  {
    // A value of the point data that is no field's (padding): zero.
    static constexpr std::uint32_t zero = ~std::uint32_t(0);

    unsigned int                         dofs_per_cell = 0;
    unsigned int                         n_points      = 0;
    std::vector<unsigned int>            component; // of each shape function
    std::vector<types::global_dof_index> dofs;      // face, shape function
    std::vector<double>                  values;    // face, point, function
    std::vector<Tensor<1, 3>>            gradients; // face, point, function
    std::vector<Tensor<1, 3>>            normals;   // face, point
    std::unique_ptr<AppUtilities::FixedMeshVtu> vtu;
    // For each point data array, each value's entry of the faces' rows
    // (face, row, point), or zero.
    std::vector<std::vector<std::uint32_t>> sources;

    std::size_t
    n_faces() const
    {
      return dofs.size() / dofs_per_cell;
    }

    /// The rows of @p face for the displacement @p u, at @p rows (row,
    /// point): the sums of FEFaceValues, in its order, then the fields of
    /// BoundaryFields.
    void
    evaluate(const Vector<double> &u,
             const std::size_t     face,
             const double          mu,
             const double          lambda,
             float                *rows) const
    {
      std::vector<double> local(dofs_per_cell);
      for (unsigned int i = 0; i < dofs_per_cell; ++i)
        local[i] = u(dofs[face * dofs_per_cell + i]);
      for (unsigned int q = 0; q < n_points; ++q)
        {
          const std::size_t point    = face * n_points + q;
          double            value[3] = {0, 0, 0};
          Tensor<1, 3>      grad_u[3];
          for (unsigned int i = 0; i < dofs_per_cell; ++i)
            {
              // FEValues skips the shape functions of zero coefficients.
              if (local[i] == 0.)
                continue;
              const unsigned int c = component[i];
              value[c] += local[i] * values[point * dofs_per_cell + i];
              grad_u[c] += local[i] * gradients[point * dofs_per_cell + i];
            }
          const Tensor<2, 3> F = deformation_gradient(grad_u);
          double             fields[BoundaryFields::n_rows];
          for (unsigned int c = 0; c < 3; ++c)
            fields[c] = value[c];
          first_piola_traction(F, normals[point], mu, lambda, fields + 3);
          cauchy_stress_components(F, mu, lambda, fields + 6);
          for (unsigned int r = 0; r < BoundaryFields::n_rows; ++r)
            rows[r * n_points + q] = float(fields[r]);
        }
    }

    /// The rows of every face, (face, row, point).
    std::vector<float>
    evaluate(const Vector<double> &u,
             const double          mu,
             const double          lambda) const
    {
      std::vector<float> rows(n_faces() * BoundaryFields::n_rows * n_points);
      parallel::apply_to_subranges(
        std::size_t(0),
        n_faces(),
        [&](const std::size_t begin, const std::size_t end) {
          for (std::size_t f = begin; f < end; ++f)
            evaluate(u,
                     f,
                     mu,
                     lambda,
                     rows.data() + f * BoundaryFields::n_rows * n_points);
        },
        16);
      return rows;
    }
  };



  BoundarySeries::BoundarySeries(const Mapping<3>            &mapping,
                                 const DoFHandler<3>         &dof_handler,
                                 const double                 mu,
                                 const double                 lambda,
                                 const DataOutBase::VtkFlags &flags)
    : mapping(mapping)
    , dof_handler(dof_handler)
    , mu(mu)
    , lambda(lambda)
    , flags(flags)
  {
    // One shape of faces (all quadrilaterals or all triangles), whose
    // vertices are the points of DataOutFaces' patches.
    const Triangulation<3> &triangulation = dof_handler.get_triangulation();
    const bool hexahedra = triangulation.all_reference_cells_are_hyper_cube();
    if (!hexahedra && !triangulation.all_reference_cells_are_simplex())
      return;

    // A displacement of small, different values everywhere, whose fields
    // DataOutFaces computes once, to compare with the faces' own sums.
    Vector<double> probe(dof_handler.n_dofs());
    for (types::global_dof_index i = 0; i < probe.size(); ++i)
      probe(i) = 1e-3 * std::sin(0.7 * double(i) + 0.3);
    const BoundaryFields fields(mu, lambda);
    EditableFaces        data_out;
    fields.add(data_out, dof_handler, probe);
    data_out.build_patches(mapping);

    auto                    faces = std::make_unique<Faces>();
    const FiniteElement<3> &fe    = dof_handler.get_fe();
    faces->dofs_per_cell          = fe.n_dofs_per_cell();
    for (unsigned int i = 0; i < fe.n_dofs_per_cell(); ++i)
      {
        if (!fe.is_primitive(i))
          return;
        faces->component.push_back(fe.system_to_component_index(i).first);
      }
    // DataOutFaces' points: the vertices of each face, in its order.
    const ReferenceCell face_shape =
      hexahedra ? ReferenceCells::Quadrilateral : ReferenceCells::Triangle;
    std::vector<Point<2>> vertices;
    for (const unsigned int v : face_shape.vertex_indices())
      vertices.push_back(face_shape.vertex<2>(v));
    const Quadrature<2> points(vertices);
    faces->n_points = points.size();
    FEFaceValues<3>                      fe_face_values(mapping,
                                   fe,
                                   points,
                                   update_values | update_gradients |
                                     update_normal_vectors);
    std::vector<types::global_dof_index> cell_dofs(faces->dofs_per_cell);
    for (auto face = data_out.first_face();
         face.first != dof_handler.get_triangulation().end();
         face = data_out.next_face(face))
      {
        const DoFHandler<3>::cell_iterator cell(
          &dof_handler.get_triangulation(),
          face.first->level(),
          face.first->index(),
          &dof_handler);
        fe_face_values.reinit(cell, face.second);
        cell->get_dof_indices(cell_dofs);
        faces->dofs.insert(faces->dofs.end(),
                           cell_dofs.begin(),
                           cell_dofs.end());
        for (unsigned int q = 0; q < faces->n_points; ++q)
          {
            for (unsigned int i = 0; i < faces->dofs_per_cell; ++i)
              {
                const unsigned int c = faces->component[i];
                faces->values.push_back(
                  fe_face_values.shape_value_component(i, q, c));
                faces->gradients.push_back(
                  fe_face_values.shape_grad_component(i, q, c));
              }
            faces->normals.push_back(fe_face_values.normal_vector(q));
          }
      }

    // The patches must be the faces, each with the points and the rows of
    // the fields (and, where DataOutFaces places points itself, their
    // coordinates after them).
    auto &patches = data_out.patches;
    if (patches.size() != faces->n_faces() ||
        patches.size() * BoundaryFields::n_rows * faces->n_points >=
          (std::size_t(1) << 24))
      return;
    for (const auto &patch : patches)
      if (patch.data.n_cols() != faces->n_points ||
          patch.data.n_rows() !=
            BoundaryFields::n_rows + (patch.points_are_available ? 3 : 0))
        return;

    // DataOutFaces' values, bit for bit, or its files.
    const std::vector<float> rows = faces->evaluate(probe, mu, lambda);
    for (std::size_t f = 0; f < patches.size(); ++f)
      for (unsigned int r = 0; r < BoundaryFields::n_rows; ++r)
        for (unsigned int q = 0; q < faces->n_points; ++q)
          {
            const float expected = patches[f].data(r, q);
            const float own =
              rows[(f * BoundaryFields::n_rows + r) * faces->n_points + q];
            if (std::memcmp(&expected, &own, sizeof(float)) != 0)
              return;
          }

    // The file's text; then where each value of its point data comes
    // from: every row value set to its own index + 1, which float holds
    // exactly below 2^24.
    const std::string text = uncompressed_vtu(data_out, flags);
    for (std::size_t f = 0; f < patches.size(); ++f)
      for (unsigned int r = 0; r < BoundaryFields::n_rows; ++r)
        for (unsigned int q = 0; q < faces->n_points; ++q)
          patches[f].data(r, q) =
            float((f * BoundaryFields::n_rows + r) * faces->n_points + q + 1);
    const std::vector<std::vector<float>> indices =
      AppUtilities::FixedMeshVtu::point_data(uncompressed_vtu(data_out, flags));
    faces->vtu = std::make_unique<AppUtilities::FixedMeshVtu>(text, flags);
    const std::vector<std::vector<float>> expected =
      AppUtilities::FixedMeshVtu::point_data(text);
    if (indices.size() != expected.size())
      return;
    for (std::size_t a = 0; a < indices.size(); ++a)
      {
        if (indices[a].size() != expected[a].size())
          return;
        std::vector<std::uint32_t> &sources = faces->sources.emplace_back();
        for (std::size_t k = 0; k < indices[a].size(); ++k)
          {
            const float index = indices[a][k];
            if (index == 0)
              sources.push_back(Faces::zero);
            else if (index >= 1 && index <= rows.size() &&
                     index == std::floor(index))
              sources.push_back(std::uint32_t(index) - 1);
            else
              return;
            const float value =
              sources.back() == Faces::zero ? 0.f : rows[sources.back()];
            if (std::memcmp(&value, &expected[a][k], sizeof(float)) != 0)
              return;
          }
      }
    this->faces = std::move(faces);
  }



  BoundarySeries::~BoundarySeries() = default;



  bool
  BoundarySeries::reuses_geometry() const
  {
    return faces != nullptr;
  }



  void
  BoundarySeries::write(const Vector<double> &u, const std::string &path) const
  {
    if (!faces)
      {
        write_boundary_vtu(mapping, dof_handler, u, mu, lambda, path, flags);
        return;
      }
    AssertThrow(u.size() == dof_handler.n_dofs(),
                ExcMessage("BoundarySeries: " + path + " was given " +
                           std::to_string(u.size()) +
                           " displacement entries, the DoFHandler has " +
                           std::to_string(dof_handler.n_dofs()) + "."));
    const std::vector<float>        rows = faces->evaluate(u, mu, lambda);
    std::vector<std::vector<float>> point_data;
    for (const auto &sources : faces->sources)
      {
        std::vector<float> &values = point_data.emplace_back(sources.size());
        for (std::size_t k = 0; k < sources.size(); ++k)
          values[k] = sources[k] == Faces::zero ? 0.f : rows[sources[k]];
      }
    const std::string text = faces->vtu->text(point_data);
    AppUtilities::write_file(path, [&](std::ostream &out) {
      out.write(text.data(), text.size());
    });
  }



  void
  write_boundary_vtu(const Mapping<3>            &mapping,
                     const DoFHandler<3>         &dof_handler,
                     const Vector<double>        &u,
                     const double                 mu,
                     const double                 lambda,
                     const std::string           &path,
                     const DataOutBase::VtkFlags &flags)
  {
    write_boundary_faces(mapping,
                         dof_handler,
                         u,
                         mu,
                         lambda,
                         [&](DataOutFaces<3> &data_out) {
                           AppUtilities::write_vtu(data_out, flags, path);
                         });
  }



  void
  write_boundary_pieces(
    const Mapping<3>                                   &mapping,
    const DoFHandler<3>                                &dof_handler,
    const TrilinosWrappers::MPI::Vector                &u,
    const double                                        mu,
    const double                                        lambda,
    const std::function<void(const DataOutFaces<3> &)> &write)
  {
    write_boundary_faces(mapping,
                         dof_handler,
                         u,
                         mu,
                         lambda,
                         [&](DataOutFaces<3> &data_out) {
                           write(data_out);
                         });
  }
} // namespace Hyperelastic
