// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_wave_test_model_h
#define gpu_assembly_tests_wave_test_model_h

#include <gpu_assembly/wave/wave_stepper.h>

#include <cmath>
#include <vector>

#include "wave_test_meshes.h"

namespace Testing
{
  /// A wave model the steppers are tested on: its mesh, system, node
  /// graph, sources and receivers.
  struct WaveModel
  {
    GPUAssembly::Wave::WaveMesh                     mesh;
    std::vector<GPUAssembly::Wave::ElasticMaterial> materials;
    GPUAssembly::Wave::NodalSystem                  system;
    std::vector<unsigned int>                       offsets, neighbours;
    std::vector<GPUAssembly::Wave::Source>          sources;
    std::vector<unsigned int>                       receivers;
    double                                          dt_stable = 0;
  };

  /**
   * A plate with a hole (@p n_refinements, of @p triangles or
   * quadrilaterals), two materials (x < 0: a damped one if @p damping), an
   * absorbing layer on the right if @p damping; if @p sources, a
   * tone-burst force on the top, a prescribed displacement pulse on the
   * left edge and clamped nodes at the bottom. Three receivers.
   */
  inline WaveModel
  make_wave_model(const unsigned int n_refinements,
                  const bool         triangles,
                  const bool         damping,
                  const bool         sources)
  {
    using namespace GPUAssembly::Wave;
    WaveModel                model;
    dealii::Triangulation<2> tria;
    make_plate_with_hole(n_refinements, triangles, tria);
    for (const auto &cell : tria.active_cell_iterators())
      cell->set_material_id(cell->center()[0] < 0 ? 1 : 0);
    WaveDiscretization discretization;
    discretization.reinit(tria, {{0, 0}, {1, 1}});
    model.mesh      = discretization.get_mesh();
    model.materials = {ElasticMaterial{1.0, 0.3, 1.0, 0},
                       ElasticMaterial{2.0, 0.25, 1.5, damping ? 0.05 : 0}};
    if (damping)
      apply_absorbing_layers(
        {AbsorbingLayer{AbsorbingLayer::Side::right, 0.3, 2.0}},
        model.mesh);
    model.system = assemble_nodal_system(model.mesh, model.materials);
    make_node_graph(model.system, model.offsets, model.neighbours);
    model.dt_stable = 2. / std::sqrt(model.system.estimate_max_eigenvalue());
    if (sources)
      {
        Source force;
        force.nodes        = model.mesh.nodes_in_box(-0.3, 0.99, 0.3, 1.01);
        force.direction[0] = 0.3, force.direction[1] = -1;
        force.signal.frequency = 1.0;
        force.signal.n_cycles  = 3;
        model.sources.push_back(force);
        Source pulse;
        pulse.type         = Source::Type::displacement;
        pulse.nodes        = model.mesh.nodes_in_box(-1.01, -0.2, -0.99, 0.2);
        pulse.direction[0] = 1, pulse.direction[1] = 0;
        pulse.amplitude    = 1e-3;
        pulse.signal.type  = Signal::Type::gaussian;
        pulse.signal.delay = 1.0, pulse.signal.width = 0.3;
        model.sources.push_back(pulse);
        Source clamp;
        clamp.type      = Source::Type::displacement;
        clamp.nodes     = model.mesh.nodes_in_box(-1.01, -1.01, 1.01, -0.99);
        clamp.amplitude = 0;
        model.sources.push_back(clamp);
      }
    model.receivers = {model.mesh.nearest_node(0.5, 0.5),
                       model.mesh.nearest_node(-0.6, -0.6),
                       model.mesh.nearest_node(0.9, -0.1)};
    return model;
  }

  /// The model's nodes in blocks of at most @p block_size nodes and as many
  /// halo nodes.
  inline GPUAssembly::Wave::NodeBlocks
  blocks_of(const WaveModel                         &model,
            const GPUAssembly::Wave::PartitionerType type,
            const unsigned int                       block_size = 128)
  {
    GPUAssembly::Wave::BlockLimits limits;
    limits.max_block_size = block_size;
    limits.max_halo_nodes = block_size;
    return GPUAssembly::Wave::partition_nodes(type,
                                              model.mesh,
                                              model.offsets,
                                              model.neighbours,
                                              limits);
  }

  /// The receiver traces of a run of @p n_steps steps of @p plan (a record
  /// every @p interval steps) stopped after @p n_first steps and continued
  /// by a second stepper from the first's state and traces, as a restart
  /// from a checkpoint continues.
  template <template <typename> class Stepper, typename Number>
  std::vector<double>
  restarted_traces(const GPUAssembly::Wave::Plan<Number> &plan,
                   const unsigned int                     interval,
                   const unsigned int                     n_first,
                   const unsigned int                     n_steps)
  {
    Stepper<Number> first, second;
    first.reinit(plan, interval);
    first.advance(n_first);
    std::vector<double> u_prev, u_curr;
    first.get_state(u_prev, u_curr);
    second.reinit(plan, interval);
    second.set_state(first.step(), u_prev, u_curr);
    second.set_receiver_history(first.receiver_history());
    second.advance(n_steps - n_first);
    return second.receiver_history();
  }
} // namespace Testing

#endif
