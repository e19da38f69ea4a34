#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <elfutils/libdw.h>

struct Dwfl;
struct Dwfl_Module;

namespace nk::client {

// Names a code address of this process as a debugger would: the function
// and the source line, from the modules' symbol tables and DWARF (elfutils'
// libdw on the process's own maps), so static functions and the compiler's
// outlined ones get names without -rdynamic. A task construct's code
// address is the return address of the runtime call inside it, so the line
// is that of the byte before it (the call).
//
//   with DWARF:   "fib (fib.c:31)"     innermost non-artificial function
//                 (inlined ones too), C++ demangled without its parameter
//                 list ("ns::work<int> (w.cc:12)")
//   in outlined code (clang's .omp_outlined., .omp_task_entry., gcc's
//   f._omp_fn.N): the user's function that holds the construct: among the
//   compile unit's real functions in the construct's file, the one declared
//   last above the construct's line whose source extent (its declaration
//   line to the last line its own code has) holds that line; else the last
//   one declared above it.
//   symbol table only: "fib+0x1f"      (offset of the address itself)
//   no name we can stand behind (stripped, or outlined code without DWARF):
//                 "prog+0x1234"        module's base name and the address in
//                 the module's ELF file (its offset from the load base for a
//                 PIE or a library: the same in every run, whatever ASLR did;
//                 `addr2line -e prog 0x1234` reads it)
//   not in any module: "0x7f..."
//
// Each address is resolved once and cached. libdw's session is opened
// lazily, at the first name asked for, once; if it cannot be, dladdr gives
// "module+offset" names. No failure throws or waits: the name falls back.
// Thread-safe (one lock: libdw's session is not), but meant for the task
// shipper's thread, off the app's path.
class CodeSymbolizer {
 public:
  CodeSymbolizer();
  ~CodeSymbolizer();
  CodeSymbolizer(const CodeSymbolizer&) = delete;
  CodeSymbolizer& operator=(const CodeSymbolizer&) = delete;

  std::string name(uint64_t code_address);
  // The name if it was resolved already; never resolves.
  std::optional<std::string> cached(uint64_t code_address) const;

  // A demangled C++ name without its return type and parameter list, as a
  // debugger's frame shows it ("int ns::work<int>(int)" -> "ns::work<int>");
  // what it cannot take apart it returns whole.
  static std::string withoutSignature(std::string_view demangled);

 private:
  struct DwflCloser {
    void operator()(Dwfl* dwfl) const;
  };
  struct Extent {  // a real function and its place in its source
    Dwarf_Die die;
    std::string name;  // made when first asked for (nameOf)
    std::string file;
    int first = 0, last = 0;
  };
  static constexpr size_t kNoExtent = static_cast<size_t>(-1);  // outlined or artificial code
  struct Range {
    uint64_t low, high;  // the unit's addresses
    size_t extent;
  };
  // A compile unit's functions, read once: their extents, and their code's
  // ranges, outer ones before the ones nested in them.
  struct Unit {
    std::vector<Extent> extents;
    std::vector<Range> ranges;
    std::unordered_map<uint64_t, std::string> qualifiers;  // declaration's DIE offset -> "ns::C::"
  };

  struct UnitRange {
    uint64_t low, high, bias;
    Dwarf_Die* cu;
  };

  std::string resolve(uint64_t code_address);
  Dwarf_Die* unitOf(Dwfl_Module* module, uint64_t address, Dwarf_Addr* bias);
  bool openSession();
  Dwfl_Module* moduleOf(uint64_t address);
  std::string fromDwarf(Dwfl_Module* module, uint64_t address);
  Unit& unitFunctions(Dwfl_Module* module, uint64_t address);
  static std::string& nameOf(const Unit& unit, Extent& extent);
  // The innermost function's range holding `unit_address`, if any.
  static const Range* innermost(const Unit& unit, uint64_t unit_address);
  static std::string moduleOffset(Dwfl_Module* module, uint64_t address);
  static std::string fromDladdr(uint64_t address);

  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, std::string> names_;
  std::unique_ptr<Dwfl, DwflCloser> dwfl_;
  bool tried_open_ = false;
  std::map<std::pair<const void*, uint64_t>, Unit> units_read_;  // per (module, CU offset)
  std::unordered_map<const Dwfl_Module*, std::vector<UnitRange>> units_;  // when libdw finds no aranges
};

}  // namespace nk::client
