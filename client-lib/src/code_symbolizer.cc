#include "code_symbolizer.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <tuple>

namespace nk::client {

namespace {

std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string_view baseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string demangled(const char* name) {
  if (!name) return {};
  int status = -1;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && out ? CodeSymbolizer::withoutSignature(out) : std::string(name);
  std::free(out);
  return result;
}

// Code the compiler made out of a construct's body: clang's .omp_outlined.
// (and ._debug__), .omp_task_entry., .omp_task_privates_map., offloading
// entries; gcc's f._omp_fn.N and f._omp_cpyfn.N.
bool isOutlined(std::string_view name) {
  return name.starts_with(".omp_") || name.starts_with("__omp_") || name.find("._omp_fn.") != std::string_view::npos ||
         name.find("._omp_cpyfn.") != std::string_view::npos;
}

const char* attributeString(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attribute;
  return dwarf_formstring(dwarf_attr_integrate(die, name, &attribute));
}

// A function DIE's raw name: its linkage name when it has one (C++), else
// its plain name; through abstract origins and specifications.
const char* rawName(Dwarf_Die* die) {
  if (const char* linkage = attributeString(die, DW_AT_linkage_name)) return linkage;
  if (const char* linkage = attributeString(die, DW_AT_MIPS_linkage_name)) return linkage;
  return attributeString(die, DW_AT_name);
}

// The DIE that declares a function: through an inlined or concrete
// instance's abstract origin, and a definition's specification.
Dwarf_Die declaration(Dwarf_Die* die) {
  Dwarf_Die current = *die;
  for (int hops = 0; hops < 4; ++hops) {
    Dwarf_Attribute attribute;
    Dwarf_Die next;
    if (dwarf_attr(&current, DW_AT_abstract_origin, &attribute) == nullptr &&
        dwarf_attr(&current, DW_AT_specification, &attribute) == nullptr)
      break;
    if (dwarf_formref_die(&attribute, &next) == nullptr) break;
    current = next;
  }
  return current;
}

bool isArtificial(Dwarf_Die* die) {
  Dwarf_Attribute attribute;
  bool flag = false;
  return dwarf_formflag(dwarf_attr_integrate(die, DW_AT_artificial, &attribute), &flag) == 0 && flag;
}

// dwarf_decl_file refuses DWARF 5's file 0 (the unit's own file, where
// clang declares the unit's functions): the file table read directly.
const char* declFile(Dwarf_Die* die) {
  Dwarf_Attribute attribute;
  Dwarf_Word index = 0;
  if (dwarf_formudata(dwarf_attr_integrate(die, DW_AT_decl_file, &attribute), &index) != 0) return nullptr;
  Dwarf_Die cu;
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (!dwarf_diecu(die, &cu, nullptr, nullptr) || dwarf_getsrcfiles(&cu, &files, &count) != 0 || index >= count)
    return nullptr;
  return dwarf_filesrc(files, index, nullptr, nullptr);
}

struct SourceLine {
  std::string file;  // as the line table has it
  int line = 0;
};

// The row's line; clang gives compiler-made code (a task entry's inlined
// body, a depobj's set-up) line 0, and a debugger then shows the line
// before it: so does this, from the rows just before the address in its
// sequence.
std::optional<SourceLine> lineOf(Dwarf_Die* cu, Dwarf_Addr address) {
  Dwarf_Line* line = dwarf_getsrc_die(cu, address);
  int number = 0;
  if (!line || dwarf_lineno(line, &number) != 0) return std::nullopt;
  if (number <= 0) {
    Dwarf_Lines* lines = nullptr;
    size_t count = 0;
    if (dwarf_getsrclines(cu, &lines, &count) != 0) return std::nullopt;
    // The last row at or before the address (rows are sorted by address
    // within a sequence, and sequences by their start).
    size_t at = count;
    for (size_t low = 0, high = count; low < high;) {
      size_t mid = low + (high - low) / 2;
      Dwarf_Addr row_address = 0;
      dwarf_lineaddr(dwarf_onesrcline(lines, mid), &row_address);
      if (row_address <= address) {
        at = mid;
        low = mid + 1;
      } else {
        high = mid;
      }
    }
    line = nullptr;
    constexpr size_t kLookBack = 256;
    for (size_t step = 0; at < count && step < kLookBack; ++step, --at) {
      Dwarf_Line* row = dwarf_onesrcline(lines, at);
      bool end = false;
      if (step > 0 && (dwarf_lineendsequence(row, &end) != 0 || end)) break;  // another sequence's
      if (dwarf_lineno(row, &number) == 0 && number > 0) {
        line = row;
        break;
      }
      if (at == 0) break;
    }
    if (!line) return std::nullopt;
  }
  const char* file = dwarf_linesrc(line, nullptr, nullptr);
  if (!file) return std::nullopt;
  return SourceLine{file, number};
}

std::string withLine(std::string function, const SourceLine& at) {
  return function + " (" + std::string(baseName(at.file)) + ":" + std::to_string(at.line) + ")";
}

}  // namespace

void CodeSymbolizer::DwflCloser::operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }

CodeSymbolizer::CodeSymbolizer() = default;
CodeSymbolizer::~CodeSymbolizer() = default;

std::string CodeSymbolizer::name(uint64_t code_address) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = names_.try_emplace(code_address);
  if (inserted) it->second = resolve(code_address);
  return it->second;
}

std::optional<std::string> CodeSymbolizer::cached(uint64_t code_address) const {
  std::lock_guard lock(mutex_);
  auto found = names_.find(code_address);
  if (found == names_.end()) return std::nullopt;
  return found->second;
}

std::string CodeSymbolizer::withoutSignature(std::string_view full) {
  std::string_view s = full;
  // Trailing qualifiers of a member function.
  for (bool trimmed = true; trimmed;) {
    trimmed = false;
    for (std::string_view q : {" const", " volatile", " &&", " &", " noexcept"}) {
      if (s.ends_with(q)) {
        s.remove_suffix(q.size());
        trimmed = true;
      }
    }
  }
  if (!s.ends_with(')')) return std::string(full);
  // The parameter list: from the last ')' back to its '('.
  int depth = 0;
  size_t open = std::string_view::npos;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') ++depth;
    if (s[i] == '(' && --depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string_view::npos || open == 0) return std::string(full);
  std::string_view head = s.substr(0, open);
  // A template's return type comes first: the name starts after the last
  // space outside <>, () and {} ("{lambda(int)#1}", "(anonymous namespace)").
  // An operator's own characters are not brackets: give up on those.
  if (head.find("operator") != std::string_view::npos) return std::string(head);
  int nesting = 0;
  size_t start = 0;
  for (size_t i = 0; i < head.size(); ++i) {
    char c = head[i];
    if (c == '<' || c == '(' || c == '{' || c == '[') ++nesting;
    if (c == '>' || c == ')' || c == '}' || c == ']') --nesting;
    if (nesting < 0) return std::string(full);
    if (c == ' ' && nesting == 0) start = i + 1;
  }
  if (nesting != 0 || start >= head.size()) return std::string(full);
  return std::string(head.substr(start));
}

bool CodeSymbolizer::openSession() {
  if (tried_open_) return dwfl_ != nullptr;
  tried_open_ = true;
  static char* debuginfo_path = nullptr;
  // Separate debug files by build id (/usr/lib/debug/.build-id), and no
  // further: dwfl_standard_find_debuginfo's last resort is debuginfod, whose
  // client starts curl, libssh2 and OpenSSL inside the app (and may go to
  // the network, with DEBUGINFOD_URLS set as Debian's login shells set
  // it). Started by the shipper while the program exits, after OpenSSL's
  // own atexit cleanup, it crashed the program (task_events_bench: chain and
  // fib, lossy, 1 thread: SIGSEGV in CRYPTO_THREAD_read_lock, about 1 run in
  // 10). Only a debug file found by .gnu_debuglink name alone is given up.
  static const Dwfl_Callbacks callbacks = {
      .find_elf = dwfl_linux_proc_find_elf,
      .find_debuginfo = dwfl_build_id_find_debuginfo,
      .section_address = nullptr,
      .debuginfo_path = &debuginfo_path,
  };
  std::unique_ptr<Dwfl, DwflCloser> dwfl(dwfl_begin(&callbacks));
  if (!dwfl) return false;
  dwfl_report_begin(dwfl.get());
  if (dwfl_linux_proc_report(dwfl.get(), getpid()) != 0) return false;
  if (dwfl_report_end(dwfl.get(), nullptr, nullptr) != 0) return false;
  dwfl_ = std::move(dwfl);
  return true;
}

// A library loaded after the session opened is not in it yet: the maps are
// read again once for each address no module holds (each is cached after).
Dwfl_Module* CodeSymbolizer::moduleOf(uint64_t address) {
  if (Dwfl_Module* module = dwfl_addrmodule(dwfl_.get(), address)) return module;
  dwfl_report_begin_add(dwfl_.get());
  int failed = dwfl_linux_proc_report(dwfl_.get(), getpid());
  dwfl_report_end(dwfl_.get(), nullptr, nullptr);
  return failed == 0 ? dwfl_addrmodule(dwfl_.get(), address) : nullptr;
}

std::string CodeSymbolizer::resolve(uint64_t code_address) {
  if (code_address == 0) return hex(0);
  // The call inside the construct: its last byte is still in the
  // construct's function and on its line (the return address may not be).
  const uint64_t call = code_address - 1;
  if (!openSession()) return fromDladdr(code_address);
  Dwfl_Module* module = moduleOf(call);
  if (!module) return fromDladdr(code_address);
  std::string from_dwarf = fromDwarf(module, call);
  if (!from_dwarf.empty()) return from_dwarf;
  GElf_Off offset = 0;
  GElf_Sym symbol;
  const char* symbol_name = dwfl_module_addrinfo(module, call, &offset, &symbol, nullptr, nullptr, nullptr);
  if (symbol_name && *symbol_name && !isOutlined(symbol_name))
    return demangled(symbol_name) + "+" + hex(offset + 1);
  return moduleOffset(module, code_address);
}

std::string CodeSymbolizer::fromDwarf(Dwfl_Module* module, uint64_t address) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = unitOf(module, address, &bias);
  if (!cu) return {};
  std::optional<SourceLine> at = lineOf(cu, address - bias);
  if (!at) return {};  // no line: the symbol table's "+offset" says more than a bare name
  // The unit's own table, not dwarf_getscopes: that walks the whole unit
  // for each address, and does not look inside namespaces.
  Unit& unit = unitFunctions(module, address);
  const Range* range = innermost(unit, address - bias);
  if (!range) return {};
  if (range->extent != kNoExtent) return withLine(nameOf(unit, unit.extents[range->extent]), *at);
  // Outlined code: the user's function around the construct's line, the
  // one declared last above it whose extent holds it (an extent's end may
  // run long: inlined code brings its caller's lines; its start does not).
  Extent* best = nullptr;
  for (Extent& e : unit.extents) {
    if (e.file != at->file || e.first > at->line) continue;
    const bool holds = e.last >= at->line;
    const bool best_holds = best && best->last >= at->line;
    if (!best || (holds && !best_holds) || (holds == best_holds && e.first > best->first)) best = &e;
  }
  if (best) {
    std::string name = nameOf(unit, *best);
    if (!name.empty()) return withLine(name, *at);
  }
  return withLine(moduleOffset(module, address + 1), *at);
}

// A function's name as a debugger shows it: C++ demangled without its
// signature; without a linkage name (C, or gcc's internal-linkage C++), its
// plain name under the namespaces and classes that declare it.
std::string& CodeSymbolizer::nameOf(const Unit& unit, Extent& extent) {
  if (!extent.name.empty()) return extent.name;
  const char* raw = rawName(&extent.die);
  if (!raw) return extent.name;
  if (std::string_view(raw).starts_with("_Z")) return extent.name = demangled(raw);
  Dwarf_Die declared = declaration(&extent.die);
  auto prefix = unit.qualifiers.find(dwarf_dieoffset(&declared));
  extent.name = (prefix == unit.qualifiers.end() ? std::string() : prefix->second) + raw;
  return extent.name;
}

// libdw finds a unit through .debug_aranges, which clang does not write:
// without them, the units' own address ranges, read once per module.
Dwarf_Die* CodeSymbolizer::unitOf(Dwfl_Module* module, uint64_t address, Dwarf_Addr* bias) {
  if (Dwarf_Die* cu = dwfl_module_addrdie(module, address, bias)) return cu;
  auto [it, inserted] = units_.try_emplace(module);
  std::vector<UnitRange>& units = it->second;
  if (inserted) {
    Dwarf_Die* cu = nullptr;
    Dwarf_Addr cu_bias = 0;
    while ((cu = dwfl_module_nextcu(module, cu, &cu_bias)) != nullptr) {
      Dwarf_Addr base = 0, low = 0, high = 0;
      ptrdiff_t offset = 0;
      while ((offset = dwarf_ranges(cu, offset, &base, &low, &high)) > 0)
        units.push_back({low + cu_bias, high + cu_bias, cu_bias, cu});
    }
    std::sort(units.begin(), units.end(), [](const UnitRange& a, const UnitRange& b) { return a.low < b.low; });
  }
  auto after = std::upper_bound(units.begin(), units.end(), address,
                                [](uint64_t a, const UnitRange& u) { return a < u.low; });
  // Ranges of units may nest (a unit's whole span around another's piece):
  // the nearest one below that holds the address.
  while (after != units.begin()) {
    --after;
    if (address < after->high) {
      *bias = after->bias;
      return after->cu;
    }
  }
  return nullptr;
}

// The compile unit's real functions (not artificial, not outlined, with
// code, inlined ones too) with their source extents: from the declaration
// line to the last line, in the function's file, of the unit's line table
// rows whose innermost function it is.
CodeSymbolizer::Unit& CodeSymbolizer::unitFunctions(Dwfl_Module* module, uint64_t address) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = unitOf(module, address, &bias);
  static Unit none;
  if (!cu) return none;
  auto key = std::make_pair(static_cast<const void*>(module), static_cast<uint64_t>(dwarf_dieoffset(cu)));
  auto [it, inserted] = units_read_.try_emplace(key);
  Unit& unit = it->second;
  std::vector<Extent>& extents = unit.extents;
  std::vector<Range>& ranges = unit.ranges;
  if (!inserted) return unit;
  // One extent per function, however many places it was inlined into.
  std::map<std::tuple<std::string, std::string, int>, size_t> known;
  auto extentFor = [&](Dwarf_Die* die) -> size_t {
    const char* raw = rawName(die);
    const char* file = declFile(die);
    int line = 0;
    if (!raw || isOutlined(raw) || isArtificial(die) || !file || dwarf_decl_line(die, &line) != 0) return kNoExtent;
    auto [found, added] = known.try_emplace(std::make_tuple(std::string(raw), std::string(file), line), extents.size());
    if (added) extents.push_back({*die, {}, file, line, line});
    return found->second;
  };
  auto addRanges = [&](Dwarf_Die* die, size_t extent) {
    Dwarf_Addr base = 0, low = 0, high = 0;
    ptrdiff_t offset = 0;
    while ((offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0) ranges.push_back({low, high, extent});
  };
  // Functions sit at the unit's top level or in namespaces and classes;
  // inlined ones inside the functions (and their blocks) they went into.
  // The namespaces and classes around each declaration are noted on the
  // way (`prefix`), for names without a linkage name to demangle.
  auto visit = [&](auto& self, Dwarf_Die* parent, bool in_code, const std::string& prefix) -> void {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      int tag = dwarf_tag(&child);
      if (!in_code && (tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                       tag == DW_TAG_union_type)) {
        const char* name = dwarf_diename(&child);
        self(self, &child, false, prefix + (name ? name : "(anonymous namespace)") + "::");
      } else if ((!in_code && tag == DW_TAG_subprogram) || (in_code && tag == DW_TAG_inlined_subroutine)) {
        if (!in_code && !prefix.empty()) unit.qualifiers.emplace(dwarf_dieoffset(&child), prefix);
        Dwarf_Addr low = 0;
        bool has_code = dwarf_lowpc(&child, &low) == 0 || dwarf_hasattr(&child, DW_AT_ranges);
        if (!has_code) continue;
        addRanges(&child, extentFor(&child));
        self(self, &child, true, prefix);
      } else if (in_code && tag == DW_TAG_lexical_block) {
        self(self, &child, true, prefix);
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  };
  visit(visit, cu, false, std::string());
  // Scopes nest: outer ranges first, then the ones inside them.
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.low != b.low ? a.low < b.low : a.high > b.high; });

  Dwarf_Lines* lines = nullptr;
  size_t count = 0;
  if (ranges.empty() || dwarf_getsrclines(cu, &lines, &count) != 0) return unit;
  struct Row {
    Dwarf_Addr at;
    int line;
    const char* file;
  };
  std::vector<Row> rows;
  rows.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    Dwarf_Line* line = dwarf_onesrcline(lines, i);
    Row row{};
    bool end = false;
    if (!line || dwarf_lineaddr(line, &row.at) != 0 || dwarf_lineno(line, &row.line) != 0) continue;
    // A sequence's end row is the address after its code, maybe another
    // function's first.
    if (dwarf_lineendsequence(line, &end) != 0 || end) continue;
    row.file = dwarf_linesrc(line, nullptr, nullptr);
    // A row followed by one at the same address covers no code (clang puts
    // the outlined function's own line there, ahead of an inlined body's).
    if (!rows.empty() && rows.back().at == row.at) rows.pop_back();
    if (row.file && row.line > 0) rows.push_back(row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.at < b.at; });
  // A sweep: the innermost range holding a row is the stack's top.
  std::vector<const Range*> open;
  size_t next = 0;
  for (const Row& row : rows) {
    while (next < ranges.size() && ranges[next].low <= row.at) {
      while (!open.empty() && open.back()->high <= ranges[next].low) open.pop_back();
      open.push_back(&ranges[next++]);
    }
    while (!open.empty() && open.back()->high <= row.at) open.pop_back();
    if (open.empty() || open.back()->extent == kNoExtent) continue;
    Extent& e = extents[open.back()->extent];
    if (e.file == row.file && row.line > e.last) e.last = row.line;
  }
  return unit;
}

const CodeSymbolizer::Range* CodeSymbolizer::innermost(const Unit& unit, uint64_t unit_address) {
  auto after = std::upper_bound(unit.ranges.begin(), unit.ranges.end(), unit_address,
                                [](uint64_t a, const Range& r) { return a < r.low; });
  // Nested ranges start no earlier than those around them: the first one
  // below that holds the address is the innermost.
  while (after != unit.ranges.begin()) {
    --after;
    if (unit_address < after->high) return &*after;
  }
  return nullptr;
}

// The address in the module's ELF file: what it is at no matter where the
// module was loaded.
std::string CodeSymbolizer::moduleOffset(Dwfl_Module* module, uint64_t address) {
  const char* path = dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  Dwarf_Addr bias = 0;
  if (!dwfl_module_getelf(module, &bias)) {
    Dwarf_Addr start = 0;
    dwfl_module_info(module, nullptr, &start, nullptr, nullptr, nullptr, nullptr, nullptr);
    bias = start;
  }
  return std::string(baseName(path ? path : "?")) + "+" + hex(address - bias);
}

std::string CodeSymbolizer::fromDladdr(uint64_t address) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(address - 1), &info) && info.dli_fname && info.dli_fbase)
    return std::string(baseName(info.dli_fname)) + "+" + hex(address - reinterpret_cast<uint64_t>(info.dli_fbase));
  return hex(address);
}

}  // namespace nk::client
