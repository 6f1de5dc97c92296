// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef apps_common_snapshot_writer_h
#define apps_common_snapshot_writer_h

#include <deal.II/base/data_out_base.h>

#include <deal.II/lac/vector.h>

#include <deal.II/numerics/data_out.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace AppUtilities
{
  /**
   * Writes @p data_out (a DataOut, a DataOutFaces) as a VTU file @p path
   * (through AppUtilities::write_file) holding what its write_vtu() writes
   * with
   * @p flags: the same text and the same decoded data, with arrays larger
   * than 64 KiB compressed in blocks on the threads of deal.II's task
   * scheduler (MultithreadInfo::n_threads()) into one zlib stream each, so
   * that their compressed bytes may differ from DataOut's. Patches must be
   * built. DataOut writes the file uncompressed, with @p flags otherwise,
   * before the arrays are compressed here; @p flags are then the flags of
   * @p data_out (for a .pvtu record, say).
   */
  template <int dim, int spacedim>
  void
  write_vtu(dealii::DataOutInterface<dim, spacedim> &data_out,
            const dealii::DataOutBase::VtkFlags     &flags,
            const std::string                       &path);

  /**
   * A VTU file of a mesh that does not change, written again and again with
   * other point data. It is built once from the text that write_vtu() of a
   * DataOut or DataOutFaces writes with @p flags set to no compression
   * (@p uncompressed): its geometry, connectivity and any other binary
   * array outside the point data are compressed then, at the level of
   * @p flags, as AppUtilities::write_vtu() compresses them. text() then
   * converts, compresses and encodes only the point data, on the threads of
   * deal.II's task scheduler (MultithreadInfo::n_threads()), so that its
   * text decodes to the file AppUtilities::write_vtu() writes for the same
   * point data; the date line holds the time of text(), as DataOut's does.
   */
  class FixedMeshVtu
  {
  public:
    FixedMeshVtu(const std::string                   &uncompressed,
                 const dealii::DataOutBase::VtkFlags &flags);

    /// The values of the point data arrays of a VTU text (e.g. of the text
    /// given at construction), decoded, in the order of the file.
    static std::vector<std::vector<float>>
    point_data(const std::string &vtu);

    /// The file's text with the point data @p values (as many arrays and
    /// values as the text given at construction); throws, naming the
    /// array, on other sizes.
    std::string
    text(const std::vector<std::vector<float>> &values) const;

  private:
    std::string              header_before_date;
    bool                     header_has_date;
    std::string              header_after_date;
    std::vector<std::string> openings;
    std::vector<std::string> closings;
    std::vector<std::size_t> sizes;
    std::string              trailer;
    int                      zlib_level;
  };

  /**
   * One zlib stream (RFC 1950) of the @p n bytes at @p data, at zlib level
   * @p level (0 to 9, or Z_DEFAULT_COMPRESSION = -1): compress2()'s bytes
   * up to 64 KiB; above, 64 KiB blocks deflated on the threads of deal.II's
   * task scheduler (MultithreadInfo::n_threads()) and joined into one
   * stream, which any zlib reader expands to the same bytes.
   */
  std::vector<unsigned char>
  zlib_compress(const unsigned char *data, std::size_t n, int level);

  /// One DataArray of a VTU file: its opening tag and its decoded bytes.
  struct VtuDataArray
  {
    std::string                opening;
    std::vector<unsigned char> bytes;
  };

  /**
   * The binary DataArrays of the VTU text @p vtu, in the order of the file,
   * decoded from deal.II's compressed format (one zlib stream per array, as
   * DataOut and this file's writers write them), e.g. to compare the content
   * of two files whose compressed bytes differ. Throws, naming the array,
   * on anything else.
   */
  std::vector<VtuDataArray>
  read_vtu_data_arrays(const std::string &vtu);

  /**
   * Where a SnapshotWriter's time went, in seconds of wall time. Only
   * @p waited is spent on the caller's thread; the rest runs on the
   * writer's threads, overlapping the caller's work.
   */
  struct SnapshotTimings
  {
    /// Time the caller spent blocked in write() and flush().
    double waited = 0;
    /// The probes that build the geometry and connectivity once.
    double preparing = 0;
    /// The snapshots' @p complete functions (fields derived on the writer).
    double completing = 0;
    /// Conversion to float, compression and base64 of the point data.
    double encoding = 0;
    /// Writing the files and renaming them.
    double writing = 0;
    /// The snapshots' @p after callbacks (records, images, extra files).
    double callbacks = 0;
    /// The snapshots' @p ahead work (images drawn into memory, say), summed
    /// over the writer's threads that run it side by side.
    double ahead = 0;
    /// Files written.
    unsigned int files = 0;
  };

  /**
   * The line an app prints in its summary on the share of its wall time
   * that output costs the time loop: @p loop_seconds of @p wall_seconds
   * spent on the loop's thread in output (waiting for the writer included,
   * as given in @p writer), then what the writer's threads did beside the
   * loop. Without a writer (@p writer null) only the loop's share.
   */
  std::string
  describe_output_share(double                 loop_seconds,
                        double                 wall_seconds,
                        const SnapshotTimings *writer);

  /**
   * Writes a series of VTU files on a mesh that does not change, off the
   * caller's critical path, each file byte for byte the one deal.II's
   * DataOut::write_vtu() writes for the same data (the date line of the
   * header holds the time of writing, as DataOut's does) where each data
   * array fits one block (64 KiB); larger arrays are compressed block by
   * block on several threads into one zlib stream, whose bytes decode to
   * DataOut's data (see write_vtu()).
   *
   * The geometry and the connectivity (points, cells, offsets, types,
   * compressed and encoded) depend on the mesh only: they are written by
   * DataOut once, at construction. A snapshot then only converts its point
   * data to float, compresses and encodes them, on a thread of its own
   * that spreads the work over the threads of deal.II's task scheduler
   * (MultithreadInfo::n_threads()).
   *
   * The caller describes a snapshot as a list of input vectors (DoF vectors,
   * cell vectors) and a function @p configure that hands them to a DataOut
   * the way the program always did (attach_dof_handler, add_data_vector,
   * build_patches with its mapping and subdivisions). The writer's thread
   * starts by running @p configure on vectors that hold each entry's own
   * index, so that the value DataOut writes at every point names the input
   * entry it came from; what @p configure reads (the DoFHandler, the
   * mapping) must therefore stay unchanged and alive until the first
   * write() or flush() returns. This requires values that DataOut takes
   * from one entry each: nodal values of Lagrange elements at their support
   * points and cell data. Anything else (interpolation between support
   * points) is refused with the name of the array, as is a format the
   * writer does not reproduce (it re-encodes the probe and compares it with
   * DataOut's): the first write() or flush() throws the reason.
   *
   * write() queues a snapshot and returns; at most N wait (the one being
   * written included), N = queue_bytes / (the bytes of one snapshot's
   * inputs in double), at least 2, so that a caller that produces
   * snapshots faster than the disk takes them in bursts (the first ones
   * while the geometry is built, say) goes on and waits only when all N
   * places are taken. Each snapshot's @p after callback (a .pvd record, an
   * image) runs on a second thread, in the order of the snapshots, while
   * the next snapshot is encoded; at most N callbacks wait there. What a
   * callback needs that depends on the snapshot's data only (an image drawn
   * and encoded into memory) may be given as the snapshot's @p ahead work:
   * it starts as soon as write() queues the snapshot, on threads of its own
   * (MultithreadInfo::n_threads() / 8 of them, 1 to 4), side by side with
   * other snapshots' work and without waiting for the geometry or the
   * files, and the snapshot's callback runs once it is done (the work of
   * every queued snapshot runs, after an error too). The memory held is
   * thus about N snapshots' inputs, N callbacks and their ahead work with
   * what they captured, and the inputs and array texts of the last snapshot
   * written (for arrays whose inputs repeat). Each
   * file is written through AppUtilities::write_file: "<path>.partial", then
   * renamed. An error on the writer thread (a full disk, a missing directory)
   * stops the writing of later snapshots and is thrown, with the file's name
   * and the reason, by the next write() or by flush().
   */
  template <int dim>
  class SnapshotWriter
  {
  public:
    /// Adds the @p inputs to the DataOut and builds its patches.
    using Configure =
      std::function<void(dealii::DataOut<dim> &,
                         const std::vector<dealii::Vector<double>> &inputs)>;

    /**
     * Prepare the series: @p input_sizes are the sizes of the vectors each
     * snapshot gives (in the order @p configure expects them), @p flags the
     * VTU flags (compression level) the files are written with,
     * @p queue_bytes the memory the queued snapshots' inputs may take
     * (256 MiB unless given; two snapshots wait at least).
     */
    SnapshotWriter(const std::vector<std::size_t>      &input_sizes,
                   const Configure                     &configure,
                   const dealii::DataOutBase::VtkFlags &flags,
                   std::size_t queue_bytes = std::size_t(256) << 20);

    /// How many snapshots may wait (the one being written included).
    unsigned int
    queue_length() const;

    /// Writes what is queued, then ends the thread. An error that was not
    /// thrown yet is printed on std::cerr: call flush() to have it thrown.
    ~SnapshotWriter();

    SnapshotWriter(const SnapshotWriter &) = delete;
    SnapshotWriter &
    operator=(const SnapshotWriter &) = delete;

    /// Fills inputs derived from others (e.g. cell fields from the state)
    /// on the writer thread.
    using Complete = std::function<void(std::vector<std::vector<double>> &)>;

    /**
     * Queue the snapshot @p inputs for the file @p path; @p after runs on
     * the writer's second thread once the file is complete under its name,
     * after the callbacks of earlier snapshots (e.g. to write a .pvd record
     * that names only complete files). @p complete, if
     * given, runs on the writer thread first and may fill inputs given
     * empty; it must only read what does not change during the run.
     * @p ahead, if given, starts at once on the threads of ahead work, and
     * @p after runs only once it is done; an error it throws is reported as
     * an error of @p after (which then does not run). It must only read
     * what it captured and what does not change during the run. Waits
     * while queue_length() snapshots are queued. Throws the error of an
     * earlier
     * snapshot, if one failed, and the sizes of @p inputs if they do not
     * match (after @p complete, on the writer thread, if given).
     */
    void
    write(const std::string               &path,
          std::vector<std::vector<double>> inputs,
          std::function<void()>            after    = {},
          Complete                         complete = {},
          std::function<void()>            ahead    = {});

    /// Wait until every queued snapshot is written, its ahead work done and
    /// its callback run; throw the first error.
    void
    flush();

    /// The VTU text of @p inputs (what write() puts in a file).
    std::string
    vtu(const std::vector<std::vector<double>> &inputs) const;

    /// The timings of the snapshots written so far.
    SnapshotTimings
    timings() const;

  private:
    struct Source
    {
      // The input vector, or no_input for the zeros that pad a 2d vector
      // field to three components.
      std::uint32_t input;
      std::uint32_t index;
      // DataOut sums shape functions times values from +0, which turns a
      // value of -0 into +0; the addition of +0 reproduces it.
      bool from_sum;
    };
    static constexpr std::uint32_t no_input = ~std::uint32_t(0);

    struct Array
    {
      std::string         opening; // the DataArray line, with its newline
      std::string         closing; // "</DataArray>" line, with its newline
      std::vector<Source> sources; // one per value
      // The inputs the values come from.
      std::vector<std::uint32_t> reads;
    };

    // A snapshot's ahead work, whether it ended, and its error.
    struct Ahead
    {
      std::function<void()> work;
      bool                  done = false;
      std::exception_ptr    error;
    };

    // A callback, and the ahead work it waits for (if any).
    struct Callback
    {
      std::function<void()>  after;
      std::shared_ptr<Ahead> ahead;
    };

    struct Job
    {
      std::string                      path;
      std::vector<std::vector<double>> inputs;
      Callback                         callback;
      Complete                         complete;
    };

    /// The probes: reads what DataOut writes for @p configure.
    void
    prepare(const Configure                     &configure,
            const dealii::DataOutBase::VtkFlags &flags);

    /// The data text of each array for @p inputs; where @p known holds a
    /// text for an array, that text, unencoded again.
    std::vector<std::string>
    encode_point_data(const std::vector<std::vector<double>> &inputs,
                      std::vector<std::string>                known) const;

    /// The file's text around the arrays' data texts @p data.
    std::string
    compose(const std::vector<std::string> &data) const;

    void
    run();

    /// The second thread: runs the callbacks of written files in order.
    void
    run_callbacks();

    /// A thread of ahead work: runs the queued work in turn.
    void
    run_ahead();

    void
    throw_pending_error();

    /// Throws unless @p inputs have the sizes of the series.
    void
    check_sizes(const std::string                      &path,
                const std::vector<std::vector<double>> &inputs) const;

    std::vector<std::size_t> input_sizes;
    unsigned int             max_queued;
    int                      zlib_level;
    // The file up to the end of the date line's text before the date, the
    // rest of the header up to the point data, and what follows the point
    // data. The date is written where header_before_date ends, when the
    // header has one.
    std::string        header_before_date;
    bool               header_has_date;
    std::string        header_after_date;
    std::string        trailer;
    std::vector<Array> arrays;
    // The writer thread's last snapshot: its inputs and its arrays' texts.
    std::vector<std::vector<double>> last_inputs;
    std::vector<std::string>         last_texts;

    mutable std::mutex              mutex;
    mutable std::condition_variable changed;
    // The probes are done; if they failed, why.
    bool               prepared = false;
    std::exception_ptr prepare_error;
    std::deque<Job>    queue;
    bool               busy     = false;
    bool               stopping = false;
    // The callbacks of written files, and whether one runs.
    std::deque<Callback> callbacks;
    bool                 calling     = false;
    bool                 worker_done = false;
    // The ahead work not started yet, and how much of it runs.
    std::deque<std::shared_ptr<Ahead>> ahead_queue;
    unsigned int                       ahead_running = 0;
    std::exception_ptr                 error;
    bool                               error_thrown = false;
    SnapshotTimings                    times;
    std::thread                        worker;
    std::thread                        callback_worker;
    std::vector<std::thread>           ahead_workers;
  };

  /// describe_output_share() with the timings of @p writer, if there is one.
  template <int dim>
  std::string
  describe_output_share(const double               loop_seconds,
                        const double               wall_seconds,
                        const SnapshotWriter<dim> *writer)
  {
    if (writer == nullptr)
      return describe_output_share(loop_seconds,
                                   wall_seconds,
                                   static_cast<const SnapshotTimings *>(
                                     nullptr));
    const SnapshotTimings timings = writer->timings();
    return describe_output_share(loop_seconds, wall_seconds, &timings);
  }
} // namespace AppUtilities

#endif
