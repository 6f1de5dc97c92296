// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_packing_h
#define gpu_assembly_engine_packing_h

#include <gpu_assembly/base/config.h>

#include <functional>
#include <limits>
#include <vector>

namespace GPUAssembly
{
  /**
   * Lists of signed indices to be packed for one thread block: the reduction
   * lists of GlobalNZ (sources, then the target) and the scatter lists of
   * SharedNZ. Stored flat: list l is entries[offsets[l], offsets[l+1]).
   */
  struct IndexLists
  {
    std::vector<index_type> offsets{0};
    std::vector<index_type> entries;

    unsigned int
    n_lists() const
    {
      return offsets.size() - 1;
    }

    void
    clear()
    {
      offsets.assign(1, 0);
      entries.clear();
    }

    template <typename Iterator>
    void
    add_list(Iterator begin, Iterator end)
    {
      entries.insert(entries.end(), begin, end);
      offsets.push_back(entries.size());
    }
  };



  /**
   * Pack @p lists into @p n_lanes lanes with the Largest-Processing-Time
   * rule (longest list first, onto the currently shortest lane) and append
   * the result to @p packed as a column-major matrix with n_lanes rows:
   * entry j of lane t goes to packed[start + j * n_lanes + t]. Lanes shorter
   * than the longest are padded with 0, which the kernels skip. A list is
   * never split across lanes, so one thread processes it from its first
   * source to its target. Returns the number of columns (the longest lane).
   *
   * This is the packing of Figures 16.3 and 16.6 of the GPU Gems chapter.
   */
  unsigned int
  pack_lists_lpt(const IndexLists        &lists,
                 const unsigned int       n_lanes,
                 std::vector<index_type> &packed);

  /**
   * As pack_lists_lpt(), but write into @p packed, which must hold
   * n_lanes * lpt_n_columns(lists, n_lanes) zeros: for filling one large
   * array from many threads without intermediate copies.
   */
  void
  pack_lists_lpt(const IndexLists  &lists,
                 const unsigned int n_lanes,
                 index_type        *packed);

  /**
   * The number of columns pack_lists_lpt() produces: the longest lane.
   */
  unsigned int
  lpt_n_columns(const IndexLists &lists, const unsigned int n_lanes);

  /**
   * LPT packing as pack_lists_lpt(), stored by slices of @p slice_width
   * lanes (a warp) so that short lanes need no padding up to the longest
   * lane of the block: lanes are sorted by decreasing load (thread t takes
   * the t-th longest) and slice w holds lanes [w * slice_width, (w + 1) *
   * slice_width) column-major with as many columns as its longest lane:
   * entry j of lane t is at slice_start(w) + j * slice_width + t %
   * slice_width. With @p chunk > 1 a lane's entries are stored @p chunk at
   * a time, so that a thread reads them with one vector load: entry j of
   * lane t is at slice_start(w) + ((j / chunk) * slice_width + t %
   * slice_width) * chunk + j % chunk, and slices have a multiple of
   * @p chunk columns. Appends the slices to @p packed and the end of each
   * slice to @p slice_ends (n_lanes / slice_width values; n_lanes must be a
   * multiple of slice_width). Padding is 0.
   */
  void
  pack_lists_sliced(const IndexLists         &lists,
                    const unsigned int        n_lanes,
                    const unsigned int        slice_width,
                    std::vector<index_type>  &packed,
                    std::vector<std::size_t> &slice_ends,
                    const unsigned int        chunk = 1);

  /**
   * Packing for lists that a warp walks in lockstep (SharedNZ's node
   * pairs): each list is a first run of entries (list l's first
   * @p first_run[l]), a second run, and one closing entry. Lists are sorted
   * by the lengths of their runs and cut into rows of @p slice_width lists,
   * a list per lane; within a row each run is padded with 0 to the row's
   * longest, so that the lanes of a warp reach their second runs and their
   * closing entries at the same step. A warp whose lanes are at different
   * kinds of entries runs each kind's code in turn: with lanes packed by
   * LPT, nearly every step of a node-pair walk would have some lane closing
   * a list, and the warp would run the closing code, 9 target loads and
   * stores, next to the pair's arithmetic at almost every step.
   * Rows are assigned to the n_lanes / slice_width slices by LPT, longest
   * first, then rows of the longest slice are moved or swapped with
   * shorter ones while that shortens it. Stored as
   * pack_lists_sliced() stores its slices (entry j of a lane in chunks of @p
   * chunk), with @p slice_ends as there.
   *
   * With @p keep_list_order, lists are sorted by their second runs alone
   * and keep their order otherwise, each row's first runs padded to its
   * longest: where neighbouring lists store to neighbouring memory, the
   * lanes of a row then store together (SharedNZ's node pairs: a row
   * node's lists in column order), for a few more padding entries.
   *
   * With @p rows, leading lists go first in their rows and the rows'
   * structure is returned (AlignedRows); long leading lists may be halved
   * (AlignedRows::halve_leading).
   */
  struct AlignedRows;

  void
  pack_lists_aligned(const IndexLists                &lists,
                     const std::vector<unsigned int> &first_run,
                     const unsigned int               n_lanes,
                     const unsigned int               slice_width,
                     std::vector<index_type>         &packed,
                     std::vector<std::size_t>        &slice_ends,
                     const unsigned int               chunk           = 1,
                     const bool                       keep_list_order = false,
                     AlignedRows                     *rows = nullptr);

  /**
   * The rows of pack_lists_aligned(), for a caller that lays out data row
   * by row (SharedNZ's targets, SharedNZLayout::row_close()).
   */
  struct AlignedRows
  {
    /// In: lists that lead their rows (lanes 0, 1, ... of the row, in their
    /// order, before the others in theirs); empty: none.
    std::vector<unsigned char> leading;
    /// In: leading lists a row may hold at most.
    unsigned int max_leading = std::numeric_limits<unsigned int>::max();
    /**
     * In: leading lists with at least 4 and more than twice the mean
     * number of entries of the other lists (their closing entries left
     * out) are halved: the first half of the list's entries (with its
     * first run as far as it goes) in one lane of the row, the rest in
     * another, each with the closing entry. Such lists lead the row, then
     * the other leading lists, then the second halves in the order of
     * their first, then the other lists, so that the lane of the second
     * half of the list in slot i is n_leading + i (SharedNZLayout::
     * row_lane()); among lists of equal second runs, leading lists come
     * first, longest first runs first, even with keep_list_order, so that
     * halved lists fill rows of their own. Needs @p close.
     */
    bool halve_leading = false;
    /// In: if set, the closing entry of every lane of a row, the lanes
    /// after its last list included, is close(lists of the row, leading
    /// lists of the row, halved lists of the row), instead of each list's
    /// own closing entry: all lanes of a warp then learn the shape of the
    /// row they close.
    std::function<index_type(unsigned int, unsigned int, unsigned int)> close;
    /// Out: row r, in the order a slice walks its rows, slices in order,
    /// holds lists[offsets[r], offsets[r + 1]) in the order of their
    /// slots, the first n_leading[r] of them leading and the first
    /// n_halved[r] halved, and belongs to slice slice[r].
    std::vector<unsigned int> lists, offsets{0}, n_leading, n_halved, slice;
  };

  /**
   * The lane loads pack_lists_lpt() would produce, for tests of the balance:
   * LPT's longest lane is at most 4/3 of the optimum (plus one list).
   */
  std::vector<unsigned int>
  lpt_lane_loads(const IndexLists &lists, const unsigned int n_lanes);
} // namespace GPUAssembly

#endif
