// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_exchange_plan_h
#define gpu_assembly_distributed_exchange_plan_h

#include <deal.II/base/index_set.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/types.h>

#include <gpu_assembly/base/config.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace GPUAssembly
{
  /**
   * One exchange of summed entries: the local entries (a rank's nonzeros, or
   * its right-hand-side entries) of rows the rank owns go straight to their
   * places in the target array, those of rows other ranks own are sent to
   * their owners and added there, as deal.II's compress(VectorOperation::add)
   * does. Lists only: built once, used at every exchange.
   */
  struct ExchangeLists
  {
    /// Number of entries of the target array (all of them are written).
    std::size_t n_targets = 0;
    /// Local entry owned_sources[i] is added to target owned_targets[i].
    std::vector<std::size_t> owned_sources;
    std::vector<std::size_t> owned_targets;
    /// Ranks sent to, increasing; the message to send_ranks[p] holds the
    /// local entries send_sources[j] for j in [send_offsets[p],
    /// send_offsets[p + 1]), in this order.
    std::vector<unsigned int> send_ranks;
    std::vector<std::size_t>  send_offsets;
    std::vector<std::size_t>  send_sources;
    /// Ranks received from, increasing; value j of all received values
    /// (messages concatenated in recv_ranks' order, recv_offsets) is added
    /// to target recv_targets[j].
    std::vector<unsigned int> recv_ranks;
    std::vector<std::size_t>  recv_offsets;
    std::vector<std::size_t>  recv_targets;

    std::size_t
    n_send() const
    {
      return send_sources.size();
    }

    std::size_t
    n_recv() const
    {
      return recv_targets.size();
    }
  };



  /**
   * The plan of the exchange that turns each rank's local assembly into the
   * rows it owns: which local nonzeros and right-hand-side entries stay,
   * which go to which rank, and where every value lands in the owner's
   * arrays. Built once per mesh and DoF numbering (collective), reused at
   * every re-assembly: an exchange is one MPI_Isend/MPI_Irecv per
   * neighbouring rank and two loops over precomputed indices, without any
   * search.
   *
   * The plan knows nothing of where its targets live: reinit() asks the
   * caller, once per row, for the positions of the row's entries in the
   * target's value array and of rows in the target vector. For Trilinos
   * these are the positions in the Epetra arrays (DistributedAssembler); a
   * device-resident target gives positions in its device CSR arrays and
   * runs the same lists on the device.
   *
   * Results do not depend on timing: the owned entries are added first, in
   * local order, then the received ones in the order of the sending ranks.
   */
  class ExchangePlan
  {
  public:
    /**
     * Positions in the target values of the entries (@p row, @p columns[j])
     * for j < @p n_columns, global indices, @p columns increasing, written
     * to @p positions[j]. Called once for each row the rank writes (its own
     * and the received ones), from several threads at once for different
     * rows: the function must be safe to call concurrently.
     */
    using MatrixRowPositions =
      std::function<void(const dealii::types::global_dof_index  row,
                         const dealii::types::global_dof_index *columns,
                         const std::size_t                      n_columns,
                         std::size_t                           *positions)>;
    /**
     * Positions in the target vector's values of the global rows
     * @p rows[j], j < @p n_rows, written to @p positions[j]; called as
     * MatrixRowPositions, concurrently for different blocks of rows.
     */
    using VectorPositions =
      std::function<void(const dealii::types::global_dof_index *rows,
                         const std::size_t                      n_rows,
                         std::size_t                           *positions)>;

    ExchangePlan()                     = default;
    ExchangePlan(const ExchangePlan &) = delete;
    ExchangePlan &
    operator=(const ExchangePlan &) = delete;

    /**
     * Build the plan (collective on @p communicator) for local CSR arrays
     * (@p row_offsets, @p column_indices) whose local DoF i is the global
     * DoF @p local_to_global[i] (increasing); @p owned_rows are the rows
     * this rank owns. The targets hold @p n_matrix_targets and
     * @p n_vector_targets values; the position functions are asked for
     * each entry the rank will write, its own and those it receives, a row
     * at a time. The lists do not depend on the number of threads.
     */
    void
    reinit(const std::vector<dealii::types::global_dof_index> &local_to_global,
           const std::vector<index_type>                      &row_offsets,
           const std::vector<index_type>                      &column_indices,
           const dealii::IndexSet                             &owned_rows,
           const MPI_Comm                                      communicator,
           const std::size_t                                   n_matrix_targets,
           const MatrixRowPositions                           &matrix_positions,
           const std::size_t                                   n_vector_targets,
           const VectorPositions &vector_positions);

    /**
     * target = the sum over all ranks of their local matrix values
     * (@p local_values in the order of the local column_indices), in the
     * rows this rank owns. Collective.
     */
    template <typename Number>
    void
    exchange_matrix(const Number *local_values, double *target) const;

    /// The same for right-hand-side entries (@p local_values per local DoF).
    template <typename Number>
    void
    exchange_vector(const Number *local_values, double *target) const;

    /**
     * exchange_matrix() in two halves, so that the rank computes while the
     * messages travel: start_matrix_exchange() packs and sends the values
     * of the rows other ranks own from @p send_values (local matrix values
     * whose rows the rank does not own must be final; the others are not
     * read), finish_matrix_exchange() writes the owned values of
     * @p local_values, waits, and adds the received ones. At most one
     * matrix exchange is in flight. Collective.
     */
    template <typename Number>
    void
    start_matrix_exchange(const Number *send_values) const;

    template <typename Number>
    void
    finish_matrix_exchange(const Number *local_values, double *target) const;

    /// Let MPI move the messages of the exchanges in flight (MPI_Testall),
    /// to be called now and then while the rank computes.
    void
    progress_exchanges() const;

    /// start_matrix_exchange() for right-hand-side entries.
    template <typename Number>
    void
    start_vector_exchange(const Number *send_values) const;

    template <typename Number>
    void
    finish_vector_exchange(const Number *local_values, double *target) const;

    const ExchangeLists &
    matrix_lists() const
    {
      return matrix;
    }

    const ExchangeLists &
    vector_lists() const
    {
      return vector;
    }

    /**
     * Bytes this rank sends at one exchange of the matrix and one of the
     * right-hand side (values travel as double whatever the assembly's
     * Number).
     */
    std::size_t
    n_bytes_sent() const
    {
      return (matrix.n_send() + vector.n_send()) * sizeof(double);
    }

    /// Bytes this rank receives at one exchange of matrix and right-hand
    /// side.
    std::size_t
    n_bytes_received() const
    {
      return (matrix.n_recv() + vector.n_recv()) * sizeof(double);
    }

    /**
     * Where the time of the exchanges went, in seconds, summed over the
     * exchanges (whole, or started and finished) since the last
     * reset_times(): communication is packing the messages, posting them
     * and waiting for them (MPI_Waitall); write is zeroing the target and
     * adding the owned and the received entries into it. The owned entries
     * are added while the messages travel, so the wait counts only what
     * this overlap does not hide. exposed is that wait alone (a part of
     * communication): the time the rank stands still for messages that the
     * work done meanwhile did not cover, including a neighbour's lateness.
     */
    struct Times
    {
      double communication = 0;
      double write         = 0;
      double exposed       = 0;
    };

    const Times &
    get_times() const
    {
      return times;
    }

    void
    reset_times() const
    {
      times = Times();
    }

  private:
    /// The messages of one exchange between its start and its finish.
    struct InFlight
    {
      std::vector<MPI_Request> requests;
      // Message buffers, sized once.
      std::vector<double> send_buffer;
      std::vector<double> recv_buffer;
    };

    template <typename Number>
    void
    start(const ExchangeLists &lists,
          const int            tag,
          const Number        *send_values,
          InFlight            &in_flight) const;

    template <typename Number>
    void
    finish(const ExchangeLists &lists,
           const Number        *local_values,
           double              *target,
           InFlight            &in_flight) const;

    // A communicator of the plan's own, so that its messages never match
    // those of the program.
    std::unique_ptr<dealii::Utilities::MPI::DuplicatedCommunicator>
                     communicator;
    ExchangeLists    matrix;
    ExchangeLists    vector;
    mutable InFlight matrix_in_flight;
    mutable InFlight vector_in_flight;
    mutable Times    times;
  };
} // namespace GPUAssembly

#endif
