// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef apps_wave2d_checkpoint_h
#define apps_wave2d_checkpoint_h

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace Wave2D
{
  /// FNV-1a: @p hash updated with @p size bytes at @p data.
  std::uint64_t
  fnv1a(std::uint64_t hash, const void *data, const std::size_t size);

  /// The initial value of an FNV-1a hash.
  constexpr std::uint64_t fnv1a_basis = 1469598103934665603ull;

  /**
   * What a wave2d checkpoint holds: the fingerprint of the model it
   * belongs to, the precision of the run (bytes per number), the step,
   * u_{n-1} and u_n, the receiver records and the snapshots written so far
   * (time and file name).
   *
   * On disk: the magic "WAVE2DC2", these fields with their sizes, an
   * FNV-1a checksum of all that, and the magic again, so that a file that
   * is cut short, damaged or of another program is refused by
   * parse_checkpoint() instead of continued.
   */
  struct Checkpoint
  {
    std::uint64_t                               fingerprint = 0;
    unsigned int                                precision   = 0;
    unsigned int                                step        = 0;
    std::vector<double>                         u_previous, u_current, history;
    std::vector<std::pair<double, std::string>> snapshots;
  };

  /// The bytes of @p checkpoint as a file holds them.
  std::string
  serialize_checkpoint(const Checkpoint &checkpoint);

  /**
   * The checkpoint in the bytes @p data of the file @p name. Throws a
   * message naming the file and what is wrong where the data are not a
   * whole, undamaged wave2d checkpoint: another file, an older format, cut
   * short, a checksum that does not match, sizes that do not fit, or a
   * state or record that is not a finite number. Whether it fits the model
   * is for the caller to check.
   */
  Checkpoint
  parse_checkpoint(const std::string &data, const std::string &name);
} // namespace Wave2D

#endif
