// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef apps_common_app_utilities_h
#define apps_common_app_utilities_h

// What the three apps share so that a run either does what was asked or
// says why not: output files that appear whole or not at all, an output
// directory created or refused with the system's reason, the search for
// numbers that must not reach a file, the refusal of more than one MPI
// process, the main() of a one-process app, numbers printed with
// significant digits, a memory estimate checked before a large set-up
// starts, the refusal of parameter entries that a run would not use, and
// the entry for the compression of the VTU files.

#include <deal.II/base/data_out_base.h>
#include <deal.II/base/exceptions.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/parameter_handler.h>
#include <deal.II/base/utilities.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace AppUtilities
{
  /**
   * Declares the entry "Compression" (best speed | default | best
   * compression | none, default @p default_level) in the current subsection
   * of @p prm: the zlib level of the VTU files' data arrays
   * (DataOutBase::VtkFlags::compression_level). The level sets the files'
   * size and the time to write them, never the values they hold.
   */
  inline void
  declare_compression_entry(dealii::ParameterHandler &prm,
                            const std::string        &default_level)
  {
    prm.declare_entry(
      "Compression",
      default_level,
      dealii::Patterns::Selection("best speed|default|best compression|none"),
      "zlib level of the data arrays in the VTU files: best speed, default, "
      "best compression or none. It sets the files' size and the time to "
      "write them, never the values they hold.");
  }

  /// The level of the entry declare_compression_entry() declared.
  inline dealii::DataOutBase::VtkFlags::ZlibCompressionLevel
  parse_compression_entry(const dealii::ParameterHandler &prm)
  {
    using Flags            = dealii::DataOutBase::VtkFlags;
    const std::string name = prm.get("Compression");
    if (name == "best speed")
      return Flags::best_speed;
    if (name == "default")
      return Flags::default_compression;
    if (name == "best compression")
      return Flags::best_compression;
    AssertThrow(name == "none",
                dealii::ExcMessage("'Compression' = '" + name +
                                   "' is not one of best speed, default, "
                                   "best compression, none."));
    return Flags::no_compression;
  }

  /// Seconds of wall time from @p start to now.
  inline double
  seconds_since(const std::chrono::steady_clock::time_point start)
  {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
      .count();
  }



  /**
   * Write the file @p path through @p writer, atomically: the data go to
   * "<path>.partial", whose stream state is checked after the writer, the
   * flush and the close; only then is it renamed to @p path. An error (a
   * full disk, a missing directory, no permission) throws a message naming
   * the file and the system's reason, removes the partial file and leaves an
   * earlier @p path as it was; an interruption (SIGINT, a crash) leaves at
   * most "<path>.partial", never a truncated @p path.
   *
   * Exceptions of @p writer itself (deal.II's DataOut checks its stream
   * too) are reported the same way when the stream has failed, and passed
   * on otherwise.
   */
  inline void
  write_file(const std::string                         &path,
             const std::function<void(std::ostream &)> &writer,
             const bool                                 binary = false)
  {
    const std::string partial = path + ".partial";
    const auto        failed  = [&](const int error, const std::string &stage) {
      std::error_code ignored;
      std::filesystem::remove(partial, ignored);
      const std::string reason =
        error != 0 ? std::strerror(error) : std::string("an I/O error");
      return dealii::ExcMessage(
        "Could not write " + path + " (" + stage + ": " + reason +
        "). Nothing was written under that name; an earlier file of that "
                "name is left as it was." +
        (error == ENOSPC ? " The disk is full." : std::string()));
    };

    errno = 0;
    std::ofstream out(partial,
                      binary ?
                        std::ios::out | std::ios::binary | std::ios::trunc :
                        std::ios::out | std::ios::trunc);
    if (!out)
      throw failed(errno, "cannot create " + partial);
    try
      {
        writer(out);
      }
    catch (...)
      {
        if (!out)
          throw failed(errno, "writing");
        std::error_code ignored;
        std::filesystem::remove(partial, ignored);
        throw;
      }
    out.flush();
    if (!out)
      throw failed(errno, "writing");
    out.close();
    if (out.fail())
      throw failed(errno, "closing");
    std::error_code error;
    std::filesystem::rename(partial, path, error);
    if (error)
      throw failed(error.value(), "renaming " + partial);
  }



  /**
   * Create the output directory @p path (and its parents) unless it exists;
   * on failure throw a message naming the parameter @p entry, the path and
   * the system's reason.
   */
  inline void
  create_output_directory(const std::string &path, const std::string &entry)
  {
    std::error_code error;
    std::filesystem::create_directories(path, error);
    AssertThrow(!error,
                dealii::ExcMessage("'" + entry + "' = '" + path +
                                   "' cannot be created: " + error.message() +
                                   "."));
  }



  /**
   * The index of the first entry of @p values that is not a finite number
   * (NaN or infinite), or values.size() where all are finite. A state that
   * holds one is not written: it would make every later step and every
   * file derived from it meaningless.
   */
  inline std::size_t
  first_non_finite(const std::vector<double> &values)
  {
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!std::isfinite(values[i]))
        return i;
    return values.size();
  }



  /// The largest magnitude of the entries of @p values (0 if empty).
  inline double
  largest_magnitude(const std::vector<double> &values)
  {
    double largest = 0;
    for (const double v : values)
      largest = std::max(largest, std::abs(v));
    return largest;
  }



  /**
   * The apps run as one process: under mpirun every rank would run the
   * whole problem and write the same files. Returns false, after rank 0
   * printed why, when started on more than one MPI process.
   */
  inline bool
  refuse_several_processes(const std::string &program)
  {
    const unsigned int n =
      dealii::Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD);
    if (n <= 1)
      return true;
    if (dealii::Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0)
      std::cerr << program << " runs as one process, but it was started on "
                << n << " MPI processes (mpirun -np " << n
                << "): each would run the whole problem and write the same "
                   "files. Run it without mpirun, or with -np 1; it uses "
                   "the cores of its machine through threads and the GPU."
                << std::endl;
    return false;
  }



  /**
   * The main() of an app that runs as one process on one parameter file:
   * `program --print-parameters` prints a complete, documented file of the
   * defaults; `--help` or `-h` prints the usage and @p defaults_note before
   * it; a file name is read; no argument keeps the defaults. Then
   * run(parameters), with the Parameters that
   * Parameters::declare_parameters() declared and
   * Parameters::parse_parameters() read. An exception is reported on
   * std::cerr with the program's name. Returns main()'s exit status.
   */
  template <typename Parameters, typename Run>
  int
  run_one_process_app(int                argc,
                      char             **argv,
                      const std::string &program,
                      const std::string &defaults_note,
                      const Run         &run)
  {
    using namespace dealii;
    try
      {
        Utilities::MPI::MPI_InitFinalize mpi(argc, argv);
        if (!refuse_several_processes(program))
          return 1;
        ParameterHandler prm;
        Parameters::declare_parameters(prm);
        const std::string argument = argc > 1 ? argv[1] : "";
        if (argument == "--print-parameters" || argument == "--help" ||
            argument == "-h")
          {
            if (argument != "--print-parameters")
              std::cout << "Usage: " << argv[0]
                        << " [parameter_file.prm | --print-parameters]\n"
                        << defaults_note << "\n\n";
            prm.print_parameters(std::cout, ParameterHandler::PRM);
            return 0;
          }
        if (!argument.empty())
          prm.parse_input(argument);
        Parameters parameters;
        parameters.parse_parameters(prm);
        run(parameters);
      }
    catch (std::exception &exc)
      {
        std::cerr << "\n----------------------------------------------------\n"
                  << program << " stopped with an error:\n"
                  << exc.what() << "\nAborting."
                  << "\n----------------------------------------------------"
                  << std::endl;
        return 1;
      }
    catch (...)
      {
        std::cerr << program << " stopped with an unknown exception."
                  << std::endl;
        return 1;
      }
    return 0;
  }



  /// @p value with @p digits significant digits ("2.5e-08", "0.0001").
  inline std::string
  significant(const double value, const int digits = 4)
  {
    std::ostringstream out;
    out.precision(digits);
    out << value;
    return out.str();
  }



  /// Bytes of memory the system can still give this process (Linux's
  /// MemAvailable; 0 where unknown).
  inline std::size_t
  available_memory()
  {
    std::ifstream meminfo("/proc/meminfo");
    std::string   key;
    std::size_t   kib;
    while (meminfo >> key >> kib)
      {
        if (key == "MemAvailable:")
          return kib * 1024;
        meminfo.ignore(256, '\n');
      }
    const long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? std::size_t(pages) * std::size_t(size) : 0;
  }



  /**
   * Refuse, before anything is allocated, a problem whose estimated memory
   * @p bytes exceeds what the machine has available: @p what says what is
   * that big and @p advice which entry to change.
   */
  inline void
  check_memory_estimate(const double       bytes,
                        const std::string &what,
                        const std::string &advice)
  {
    const std::size_t available = available_memory();
    AssertThrow(available == 0 || bytes <= double(available),
                dealii::ExcMessage(what + " would need about " +
                                   significant(bytes / 1e9, 3) +
                                   " GB of memory, but this machine has " +
                                   significant(available / 1e9, 3) +
                                   " GB available. " + advice));
  }
  /**
   * The entries of @p prm whose value differs from the default that
   * @p declare gives them, as "Subsection/Entry" (nested subsections joined
   * by '/'): the entries a parameter file sets. Values are compared item by
   * item (items separated by ',' or ';', blanks ignored), as numbers where
   * both items are numbers, so that "4.0, 1,1" equals "4, 1, 1".
   */
  inline std::set<std::string>
  changed_entries(
    const dealii::ParameterHandler                        &prm,
    const std::function<void(dealii::ParameterHandler &)> &declare)
  {
    const auto entries = [](const dealii::ParameterHandler &handler) {
      std::ostringstream text;
      handler.print_parameters(text, dealii::ParameterHandler::ShortPRM);
      std::map<std::string, std::string> values;
      std::vector<std::string>           path;
      std::istringstream                 in(text.str());
      for (std::string line; std::getline(in, line);)
        {
          line = dealii::Utilities::trim(line);
          if (line.rfind("subsection ", 0) == 0)
            path.push_back(dealii::Utilities::trim(line.substr(11)));
          else if (line == "end" && !path.empty())
            path.pop_back();
          else if (const auto equals = line.find('=');
                   line.rfind("set ", 0) == 0 && equals != std::string::npos)
            {
              std::string name;
              for (const std::string &section : path)
                name += section + "/";
              values[name +
                     dealii::Utilities::trim(line.substr(4, equals - 4))] =
                dealii::Utilities::trim(line.substr(equals + 1));
            }
        }
      return values;
    };
    const auto items = [](const std::string &value) {
      std::vector<std::string> result(1);
      for (const char c : value)
        if (c == ',' || c == ';')
          result.emplace_back();
        else if (!std::isspace(static_cast<unsigned char>(c)))
          result.back() += c;
      return result;
    };
    const auto same_item = [](const std::string &a, const std::string &b) {
      if (a == b)
        return true;
      char        *end_a = nullptr, *end_b = nullptr;
      const double x = std::strtod(a.c_str(), &end_a),
                   y = std::strtod(b.c_str(), &end_b);
      return !a.empty() && !b.empty() && *end_a == '\0' && *end_b == '\0' &&
             x == y;
    };
    dealii::ParameterHandler defaults;
    declare(defaults);
    const auto            given = entries(prm), initial = entries(defaults);
    std::set<std::string> changed;
    for (const auto &[name, value] : given)
      {
        const auto it = initial.find(name);
        if (it == initial.end())
          continue;
        const std::vector<std::string> a = items(value), b = items(it->second);
        bool                           same = a.size() == b.size();
        for (std::size_t i = 0; same && i < a.size(); ++i)
          same = same_item(a[i], b[i]);
        if (!same)
          changed.insert(name);
      }
    return changed;
  }



  /**
   * Refuse the first of @p entries ("Subsection/Entry" each) of @p prm that
   * is in @p changed (changed_entries()): its value would not be used, for
   * the reason @p why, and a value someone wrote expects an effect. Entries
   * at their defaults pass.
   */
  inline void
  refuse_unused(const std::set<std::string>    &changed,
                const dealii::ParameterHandler &prm,
                const std::vector<std::string> &entries,
                const std::string              &why)
  {
    for (const std::string &entry : entries)
      if (changed.count(entry) > 0)
        {
          std::vector<std::string> path;
          std::string              name = entry;
          for (std::size_t slash;
               (slash = name.find('/')) != std::string::npos;)
            {
              path.push_back(name.substr(0, slash));
              name = name.substr(slash + 1);
            }
          AssertThrow(false,
                      dealii::ExcMessage("'" + entry + "' = '" +
                                         prm.get(path, name) +
                                         "' is not used: " + why));
        }
  }



  /**
   * An interval of steps @p interval of the entry @p entry that does not
   * fit into the run's @p n_steps steps (0, where an entry means "none" or
   * "only at the end", passes). @p what says what the run then gives (e.g.
   * "only the first and the last snapshot, as with 0"). With
   * @p refuse_where_set it is refused where the parameter file sets it
   * (@p entry is in @p changed): that value does nothing that another does
   * not do plainly. Otherwise, and at the default, a note goes to @p log.
   */
  inline void
  check_interval(const std::set<std::string> &changed,
                 const std::string           &entry,
                 const unsigned int           interval,
                 const unsigned int           n_steps,
                 const std::string           &what,
                 const bool                   refuse_where_set,
                 std::ostream                &log)
  {
    if (interval == 0 || interval <= n_steps)
      return;
    const std::string text = "'" + entry + "' = " + std::to_string(interval) +
                             " is more than the run's " +
                             std::to_string(n_steps) + " steps: " + what;
    AssertThrow(!refuse_where_set || changed.count(entry) == 0,
                dealii::ExcMessage(text + ". Choose at most " +
                                   std::to_string(n_steps) + "."));
    log << "Note: " << text << '.' << std::endl;
  }
} // namespace AppUtilities

#endif
