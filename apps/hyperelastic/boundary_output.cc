// SPDX-License-Identifier: LGPL-2.1-or-later
#include "boundary_output.h"

#include <deal.II/numerics/data_out_faces.h>
#include <deal.II/numerics/data_postprocessor.h>

#include <functional>

#include "../common/app_utilities.h"
#include "../common/snapshot_writer.h"
#include "solid_common.h"

namespace Hyperelastic
{
  namespace
  {
    using namespace dealii;

    /// F = I + grad u at point @p q of a postprocessor's input.
    Tensor<2, 3>
    deformation_gradient(const DataPostprocessorInputs::Vector<3> &inputs,
                         const unsigned int                        q)
    {
      Tensor<2, 3> F = unit_symmetric_tensor<3>();
      for (unsigned int i = 0; i < 3; ++i)
        F[i] += inputs.solution_gradients[q][i];
      return F;
    }



    /// P N at the face's points: normals from DataOutFaces.
    /**
     * A field of the deformation gradient F and the face's normal N at
     * each point: @p Base is DataPostprocessorVector or
     * DataPostprocessorTensor, @p evaluate writes the point's components.
     */
    template <class Base>
    class StressField : public Base
    {
    public:
      using Evaluate = std::function<void(const Tensor<2, 3> &F,
                                          const Tensor<1, 3> &N,
                                          Vector<double>     &values)>;

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
          evaluate(deformation_gradient(inputs, q),
                   inputs.normals.empty() ? Tensor<1, 3>() : inputs.normals[q],
                   computed[q]);
      }

    private:
      const Evaluate evaluate;
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
      const StressField<DataPostprocessorVector<3>> traction(
        "first_Piola_traction",
        update_gradients | update_normal_vectors,
        [&](const Tensor<2, 3> &F, const Tensor<1, 3> &N, Vector<double> &t) {
          const Tensor<1, 3> PN = first_piola_stress(F, mu, lambda) * N;
          for (unsigned int d = 0; d < 3; ++d)
            t(d) = PN[d];
        });
      const StressField<DataPostprocessorTensor<3>> stress(
        "Cauchy_stress",
        update_gradients,
        [&](const Tensor<2, 3> &F, const Tensor<1, 3> &, Vector<double> &s) {
          const Tensor<2, 3> sigma = cauchy_stress(F, mu, lambda);
          for (unsigned int i = 0; i < 3; ++i)
            for (unsigned int j = 0; j < 3; ++j)
              s(Tensor<2, 3>::component_to_unrolled_index(
                TableIndices<2>(i, j))) = sigma[i][j];
        });
      DataOutFaces<3> data_out;
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
      data_out.build_patches(mapping);
      write(data_out);
    }
  } // namespace



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
