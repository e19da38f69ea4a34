#!/usr/bin/env python3
"""Writes the agent's MPI wrappers (C and Fortran entry points) from
mpi_calls.def: gen_wrappers.py mpi_calls.def pmpi_wrappers.cc"""
import re
import sys

# Every role but init and initthread (whose Fortran forms are FORTRAN_INIT)
# and startreq (a pass-through the agent needs nothing from).
FORTRAN_ROLES = {"send", "recv", "probe", "sendrecv", "coll", "icoll", "start", "wait", "waitall", "waitany",
                 "waitsome", "test", "reqfree", "commnew", "commfree", "finalize"}

# How each id= of a commnew line tells the agent of the new communicator:
# (agent method, whether it takes the parent, whether it takes colour=).
COMM_ID_KINDS = {
    "parent": ("commCreated", True, True),
    "members": ("commCreatedByMembers", True, False),
    "groups": ("intercommCreated", False, False),
}


def comm_created(c, parent, child, colour):
    """The agent call a commnew wrapper makes once the call succeeded;
    parent, child and colour are C expressions (colour None without colour=)."""
    kind = c.extra.get("id", "parent")
    if kind not in COMM_ID_KINDS:
        raise SystemExit(f"{c.name}: unknown id={kind} (expected one of {', '.join(COMM_ID_KINDS)})")
    method, takes_parent, takes_colour = COMM_ID_KINDS[kind]
    if colour is not None and not takes_colour:
        raise SystemExit(f"{c.name}: colour= goes only with id=parent")
    args = ([parent] if takes_parent else []) + [child] + ([colour] if colour is not None else [])
    return f"agent->{method}({', '.join(args)})"


class Param:
    def __init__(self, text):
        text = text.strip()
        m = re.match(r"^(.*?)([A-Za-z_][A-Za-z0-9_]*)\s*(\[\])?$", text)
        if not m:
            raise SystemExit(f"cannot read parameter '{text}'")
        self.type = (m.group(1).strip() + (" *" if m.group(3) else "")).replace("  ", " ")
        self.c_decl = text
        self.name = m.group(2)
        self.is_buffer = "void" in self.type


class Call:
    def __init__(self, line, number):
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 4:
            raise SystemExit(f"mpi_calls.def:{number}: expected 4 fields separated by |, got {len(parts)}")
        self.role, self.name, params, extra = parts
        self.params = [Param(p) for p in params.split(",") if p.strip()] if params else []
        self.extra = dict(kv.split("=", 1) for kv in extra.split()) if extra else {}
        self.short = self.name[len("MPI_"):]

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        raise SystemExit(f"{self.name}: no parameter '{name}'")

    def decl(self):
        return ", ".join(p.c_decl for p in self.params) or "void"

    def args(self, skip=()):
        return ", ".join(p.name for p in self.params if p.name not in skip)

    def nonblocking(self):
        return "I" + self.short[0].lower() + self.short[1:]


def c_wrapper(c):
    n, args, decl = c.name, c.args(), c.decl()
    head = f"NK_PMPI_EXPORT int {n}({decl}) {{\n  Agent* agent = Agent::active();\n  if (!agent) return P{n}({args});\n"
    test1 = "[&](int* flag) {{ return PMPI_Test(&request, flag, {}); }}"
    if c.role in ("send", "recv"):
        peer = c.extra["peer"]
        nb = c.args(skip=("status",))
        status = "status" if c.role == "recv" else "MPI_STATUS_IGNORE"
        return (head +
                f"  Agent::Call call = agent->pointToPoint(\"{n}\", comm, {peer}, tag, count, datatype);\n"
                f"  MPI_Request request = MPI_REQUEST_NULL;\n"
                f"  int rc = PMPI_{c.nonblocking()}({nb}, &request);\n"
                f"  if (rc == MPI_SUCCESS) rc = agent->wait(call, {test1.format(status)});\n"
                f"  return agent->end(call, rc);\n}}\n")
    if c.role == "probe":
        return (head +
                f"  Agent::Call call = agent->pointToPoint(\"{n}\", comm, source, tag, 0, MPI_DATATYPE_NULL);\n"
                f"  int rc = agent->wait(call, [&](int* flag) {{ return PMPI_Iprobe(source, tag, comm, flag, status); }});\n"
                f"  return agent->end(call, rc);\n}}\n")
    if c.role == "sendrecv":
        return (head +
                f"  Agent::Call call = agent->pointToPoint(\"{n}\", comm, source, recvtag, recvcount, recvtype);\n"
                "  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};\n"
                "  MPI_Status statuses[2];\n"
                "  int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &requests[1]);\n"
                "  if (rc == MPI_SUCCESS) {\n"
                "    rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &requests[0]);\n"
                "    if (rc != MPI_SUCCESS) {  // the receive must not outlive the call\n"
                "      PMPI_Cancel(&requests[1]);\n"
                "      PMPI_Request_free(&requests[1]);\n"
                "    }\n"
                "  }\n"
                "  if (rc == MPI_SUCCESS) rc = agent->wait(call, [&](int* flag) { return PMPI_Testall(2, requests, flag, statuses); });\n"
                "  if (rc == MPI_ERR_IN_STATUS) rc = statuses[0].MPI_ERROR != MPI_SUCCESS ? statuses[0].MPI_ERROR : statuses[1].MPI_ERROR;\n"
                "  if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE) *status = statuses[1];\n"
                "  return agent->end(call, rc);\n}\n")
    if c.role == "coll":
        count = c.extra.get("count", "0")
        dtype = c.extra.get("type", "MPI_DATATYPE_NULL")
        return (head +
                f"  Agent::Call call = agent->collective(\"{n}\", comm, {count}, {dtype});\n"
                f"  auto slot = agent->watch(call);\n"
                f"  int rc = P{n}({args});\n"
                f"  agent->watched(slot, call);\n"
                f"  return agent->end(call, rc);\n}}\n")
    if c.role == "icoll":
        return (head +
                f"  int rc = P{n}({args});\n"
                f"  agent->collectiveStarted(rc == MPI_SUCCESS ? *request : MPI_REQUEST_NULL, \"{n}\", comm);\n"
                f"  return agent->checked(\"{n}\", rc);\n}}\n")
    if c.role == "start":
        persistent = "true" if c.extra.get("persistent") == "yes" else "false"
        return (head +
                f"  int rc = P{n}({args});\n"
                f"  if (rc == MPI_SUCCESS) agent->requestStarted(*request, \"{n}\", comm, {c.extra['peer']}, {persistent});\n"
                f"  return agent->checked(\"{n}\", rc);\n}}\n")
    if c.role == "wait":
        return (head +
                "  MPI_Request before = *request;\n"
                f"  Agent::Call call = agent->waitOn(\"{n}\", &before, 1);\n"
                "  int rc = agent->wait(call, [&](int* flag) { return PMPI_Test(request, flag, status); });\n"
                "  agent->requestsSettled({&before, 1}, {request, 1});\n"
                "  return agent->end(call, rc);\n}\n")
    if c.role in ("waitall", "waitany", "waitsome"):
        count = "count" if c.role != "waitsome" else "incount"
        test = {
            "waitall": "return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);",
            "waitany": "return PMPI_Testany(count, array_of_requests, index, flag, status);",
            "waitsome": ("int rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, "
                         "array_of_statuses);\n    *flag = *outcount != 0;\n    return rc;"),
        }[c.role]
        return (head +
                f"  nk::pmpi::RequestSnapshot before(array_of_requests, {count});\n"
                f"  Agent::Call call = agent->waitOn(\"{n}\", before.data(), {count});\n"
                f"  int rc = agent->wait(call, [&](int* flag) {{\n    {test}\n  }});\n"
                f"  agent->requestsSettled(before.span(), {{array_of_requests, static_cast<size_t>({count} > 0 ? {count} : 0)}});\n"
                "  return agent->end(call, rc);\n}\n")
    if c.role == "test":
        reqs, count = c.extra["requests"], c.extra["count"]
        ptr = reqs if count != "1" else reqs
        return (head +
                f"  nk::pmpi::RequestSnapshot before({ptr}, {count});\n"
                f"  int rc = P{n}({args});\n"
                f"  agent->requestsSettled(before.span(), {{{ptr}, static_cast<size_t>({count} > 0 ? {count} : 0)}});\n"
                f"  return agent->checked(\"{n}\", rc);\n}}\n")
    if c.role == "startreq":
        return head + f"  return agent->checked(\"{n}\", P{n}({args}));\n}}\n"
    if c.role == "reqfree":
        return head + f"  agent->requestFreed(*request);\n  return agent->checked(\"{n}\", P{n}({args}));\n}}\n"
    if c.role == "commnew":
        created = comm_created(c, c.extra.get("parent", "comm"), "*" + c.extra["newcomm"], c.extra.get("colour"))
        return (head +
                f"  int rc = P{n}({args});\n"
                f"  if (rc == MPI_SUCCESS) {created};\n"
                f"  return agent->checked(\"{n}\", rc);\n}}\n")
    if c.role == "commfree":
        return head + f"  agent->commFreed(*comm);\n  return agent->checked(\"{n}\", P{n}({args}));\n}}\n"
    if c.role in ("init", "initthread"):
        return (f"NK_PMPI_EXPORT int {n}({decl}) {{\n  int rc = P{n}({args});\n"
                f"  if (rc == MPI_SUCCESS) Agent::initialized();\n  return rc;\n}}\n")
    if c.role == "finalize":
        return f"NK_PMPI_EXPORT int {n}(void) {{\n  Agent::finalizing();\n  return P{n}();\n}}\n"
    raise SystemExit(f"{c.name}: unknown role '{c.role}'")


def f_params(c, extra=()):
    out = []
    for p in c.params:
        out.append(f"void* {p.name}" if p.is_buffer else f"MPI_Fint* {p.name}")
    out.extend(extra)
    return ", ".join(out)


def f_symbols(base):
    return [base + "_", base + "__", base, base.upper()]


def fortran_wrapper(c, declared):
    """The Fortran entry points (mpif.h, use mpi): Open MPI's Fortran
    bindings call PMPI_* directly, so they are wrapped themselves, on top of
    Open MPI's pmpi_* Fortran bindings (which handle MPI_IN_PLACE, status
    and handle conversions exactly as for the program)."""
    lower = c.name.lower()
    impl = "nk_f_" + lower
    params = f_params(c, ["MPI_Fint* ierr"])
    args = ", ".join([p.name for p in c.params] + ["ierr"])
    body = None
    decls = []
    test_decl = "void pmpi_test_(MPI_Fint* request, MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierr);"
    f_test = ("[&](int* flag) {{ MPI_Fint f = 0, e = MPI_SUCCESS; pmpi_test_(&request, &f, {}, &e); "
              "*flag = f; return static_cast<int>(e); }}")

    def nb_decl(name, params):
        return f"void p{name.lower()}_({params});"
    if c.role in ("send", "recv"):
        nb = "mpi_" + c.nonblocking().lower()
        nbparams = [p for p in c.params if p.name != "status"]
        decls.append(f"void p{nb}_({', '.join(('void* ' + p.name) if p.is_buffer else ('MPI_Fint* ' + p.name) for p in nbparams)}, MPI_Fint* request, MPI_Fint* ierr);")
        decls.append(test_decl)
        peer = c.extra["peer"]
        status = "status" if c.role == "recv" else "ignored_status"
        body = (f"  Agent::Call call = agent->pointToPoint(\"{c.name}\", MPI_Comm_f2c(*comm), static_cast<int>(*{peer}), "
                f"static_cast<int>(*tag), static_cast<int>(*count), MPI_Type_f2c(*datatype));\n"
                "  MPI_Fint request = 0;\n  MPI_Fint ignored_status[nk::pmpi::kFortranStatusInts];\n  (void)ignored_status;\n"
                f"  p{nb}_({', '.join(p.name for p in nbparams)}, &request, ierr);\n"
                f"  if (*ierr == MPI_SUCCESS) *ierr = agent->wait(call, {f_test.format(status)});\n"
                "  *ierr = agent->end(call, static_cast<int>(*ierr));\n")
    elif c.role == "probe":
        decls.append("void pmpi_iprobe_(MPI_Fint* source, MPI_Fint* tag, MPI_Fint* comm, MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierr);")
        body = (f"  Agent::Call call = agent->pointToPoint(\"{c.name}\", MPI_Comm_f2c(*comm), static_cast<int>(*source), "
                "static_cast<int>(*tag), 0, MPI_DATATYPE_NULL);\n"
                "  *ierr = agent->wait(call, [&](int* flag) { MPI_Fint f = 0, e = MPI_SUCCESS; "
                "pmpi_iprobe_(source, tag, comm, &f, status, &e); *flag = f; return static_cast<int>(e); });\n"
                "  *ierr = agent->end(call, static_cast<int>(*ierr));\n")
    elif c.role == "sendrecv":
        # As the C form: an Irecv and an Isend, each tested until both are
        # done (two single tests rather than a Testall: a Fortran status
        # array's stride is MPI_STATUS_SIZE, which the agent does not know).
        decls.append("void pmpi_isend_(void* buf, MPI_Fint* count, MPI_Fint* datatype, MPI_Fint* dest, MPI_Fint* tag, "
                     "MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr);")
        decls.append("void pmpi_irecv_(void* buf, MPI_Fint* count, MPI_Fint* datatype, MPI_Fint* source, MPI_Fint* tag, "
                     "MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr);")
        decls.append("void pmpi_cancel_(MPI_Fint* request, MPI_Fint* ierr);")
        decls.append("void pmpi_request_free_(MPI_Fint* request, MPI_Fint* ierr);")
        decls.append(test_decl)
        body = (f"  Agent::Call call = agent->pointToPoint(\"{c.name}\", MPI_Comm_f2c(*comm), static_cast<int>(*source), "
                "static_cast<int>(*recvtag), static_cast<int>(*recvcount), MPI_Type_f2c(*recvtype));\n"
                "  MPI_Fint recv_request = 0, send_request = 0;\n"
                "  MPI_Fint ignored_status[nk::pmpi::kFortranStatusInts];\n"
                "  pmpi_irecv_(recvbuf, recvcount, recvtype, source, recvtag, comm, &recv_request, ierr);\n"
                "  if (*ierr == MPI_SUCCESS) {\n"
                "    pmpi_isend_(sendbuf, sendcount, sendtype, dest, sendtag, comm, &send_request, ierr);\n"
                "    if (*ierr != MPI_SUCCESS) {  // the receive must not outlive the call\n"
                "      MPI_Fint ignored = MPI_SUCCESS;\n"
                "      pmpi_cancel_(&recv_request, &ignored);\n"
                "      pmpi_request_free_(&recv_request, &ignored);\n"
                "    }\n"
                "  }\n"
                "  if (*ierr == MPI_SUCCESS) {\n"
                "    bool received = false, sent = false;\n"
                "    *ierr = agent->wait(call, [&](int* flag) {\n"
                "      MPI_Fint f = 0, e = MPI_SUCCESS;\n"
                "      if (!received) {\n"
                "        pmpi_test_(&recv_request, &f, status, &e);\n"
                "        if (e != MPI_SUCCESS) return static_cast<int>(e);\n"
                "        received = f != 0;\n"
                "      }\n"
                "      if (!sent) {\n"
                "        f = 0;\n"
                "        pmpi_test_(&send_request, &f, ignored_status, &e);\n"
                "        if (e != MPI_SUCCESS) return static_cast<int>(e);\n"
                "        sent = f != 0;\n"
                "      }\n"
                "      *flag = received && sent;\n"
                "      return MPI_SUCCESS;\n"
                "    });\n"
                "  }\n"
                "  *ierr = agent->end(call, static_cast<int>(*ierr));\n")
    elif c.role == "icoll":
        body = (f"  p{lower}_({args});\n"
                f"  agent->collectiveStarted(*ierr == MPI_SUCCESS ? MPI_Request_f2c(*request) : MPI_REQUEST_NULL, "
                f"\"{c.name}\", MPI_Comm_f2c(*comm));\n"
                f"  *ierr = agent->checked(\"{c.name}\", static_cast<int>(*ierr));\n")
    elif c.role == "coll":
        decls.append(f"void p{lower}_({params});")
        count = c.extra.get("count")
        dtype = c.extra.get("type")
        count_arg = f"static_cast<int>(*{count})" if count else "0"
        type_arg = f"MPI_Type_f2c(*{dtype})" if dtype else "MPI_DATATYPE_NULL"
        body = (f"  Agent::Call call = agent->collective(\"{c.name}\", MPI_Comm_f2c(*comm), {count_arg}, {type_arg});\n"
                "  auto slot = agent->watch(call);\n"
                f"  p{lower}_({args});\n"
                "  agent->watched(slot, call);\n"
                "  *ierr = agent->end(call, static_cast<int>(*ierr));\n")
    elif c.role == "start":
        decls.append(f"void p{lower}_({params});")
        persistent = "true" if c.extra.get("persistent") == "yes" else "false"
        body = (f"  p{lower}_({args});\n"
                f"  if (*ierr == MPI_SUCCESS) agent->requestStarted(MPI_Request_f2c(*request), \"{c.name}\", "
                f"MPI_Comm_f2c(*comm), static_cast<int>(*{c.extra['peer']}), {persistent});\n")
    elif c.role == "wait":
        decls.append(test_decl)
        body = ("  MPI_Request before = MPI_Request_f2c(*request);\n"
                f"  Agent::Call call = agent->waitOn(\"{c.name}\", &before, 1);\n"
                "  *ierr = agent->wait(call, [&](int* flag) { MPI_Fint f = 0, e = MPI_SUCCESS; "
                "pmpi_test_(request, &f, status, &e); *flag = f; return static_cast<int>(e); });\n"
                "  MPI_Request after = MPI_Request_f2c(*request);\n"
                "  agent->requestsSettled({&before, 1}, {&after, 1});\n"
                "  *ierr = agent->end(call, static_cast<int>(*ierr));\n")
    elif c.role in ("waitall", "waitany", "waitsome"):
        count = "count" if c.role != "waitsome" else "incount"
        test = {
            "waitall": ("void pmpi_testall_(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* flag, MPI_Fint* statuses, MPI_Fint* ierr);",
                        "MPI_Fint f = 0; pmpi_testall_(count, array_of_requests, &f, array_of_statuses, &e); *flag = f;"),
            "waitany": ("void pmpi_testany_(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index, MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierr);",
                        "MPI_Fint f = 0; pmpi_testany_(count, array_of_requests, index, &f, status, &e); *flag = f;"),
            "waitsome": ("void pmpi_testsome_(MPI_Fint* incount, MPI_Fint* requests, MPI_Fint* outcount, MPI_Fint* indices, MPI_Fint* statuses, MPI_Fint* ierr);",
                         "pmpi_testsome_(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, &e); *flag = *outcount != 0;"),
        }[c.role]
        decls.append(test[0])
        body = (f"  nk::pmpi::RequestSnapshot before(nk::pmpi::RequestSnapshot::FromFortran{{}}, array_of_requests, static_cast<int>(*{count}));\n"
                f"  Agent::Call call = agent->waitOn(\"{c.name}\", before.data(), before.count());\n"
                "  *ierr = agent->wait(call, [&](int* flag) { MPI_Fint e = MPI_SUCCESS; "
                f"{test[1]} return static_cast<int>(e); }});\n"
                f"  nk::pmpi::RequestSnapshot after(nk::pmpi::RequestSnapshot::FromFortran{{}}, array_of_requests, static_cast<int>(*{count}));\n"
                "  agent->requestsSettled(before.span(), after.span());\n"
                "  *ierr = agent->end(call, static_cast<int>(*ierr));\n")
    elif c.role == "test":
        reqs = c.extra["requests"]
        count = "1" if c.extra["count"] == "1" else f"static_cast<int>(*{c.extra['count']})"
        body = (f"  nk::pmpi::RequestSnapshot before(nk::pmpi::RequestSnapshot::FromFortran{{}}, {reqs}, {count});\n"
                f"  p{lower}_({args});\n"
                f"  nk::pmpi::RequestSnapshot after(nk::pmpi::RequestSnapshot::FromFortran{{}}, {reqs}, {count});\n"
                "  agent->requestsSettled(before.span(), after.span());\n"
                f"  *ierr = agent->checked(\"{c.name}\", static_cast<int>(*ierr));\n")
    elif c.role == "commnew":
        decls.append(f"void p{lower}_({params});")
        colour = c.extra.get("colour")
        created = comm_created(c, f"MPI_Comm_f2c(*{c.extra.get('parent', 'comm')})", f"MPI_Comm_f2c(*{c.extra['newcomm']})",
                               f"static_cast<int>(*{colour})" if colour else None)
        body = (f"  p{lower}_({args});\n"
                f"  if (*ierr == MPI_SUCCESS) {created};\n")
    elif c.role == "reqfree":
        body = f"  agent->requestFreed(MPI_Request_f2c(*request));\n  p{lower}_({args});\n"
    elif c.role == "commfree":
        decls.append(f"void p{lower}_({params});")
        body = f"  agent->commFreed(MPI_Comm_f2c(*comm));\n  p{lower}_({args});\n"
    elif c.role == "finalize":
        decls.append("void pmpi_finalize_(MPI_Fint* ierr);")
        out = "\n".join(f"extern \"C\" {d}" for d in decls if d not in declared) + "\n"
        declared.update(decls)
        out += f"static void {impl}(MPI_Fint* ierr) {{\n  Agent::finalizing();\n  pmpi_finalize_(ierr);\n}}\n"
        for s in f_symbols(lower):
            out += f"extern \"C\" NK_PMPI_EXPORT void {s}(MPI_Fint* ierr) {{ {impl}(ierr); }}\n"
        return out
    if body is None:
        return ""
    passthrough = f"p{lower}_({args})"
    decls.insert(0, f"void p{lower}_({params});")
    out = "\n".join(f"extern \"C\" {d}" for d in decls if d not in declared) + "\n"
    declared.update(decls)
    out += (f"static void {impl}({params}) {{\n  Agent* agent = Agent::active();\n"
            f"  if (!agent) {{\n    {passthrough};\n    return;\n  }}\n{body}}}\n")
    for s in f_symbols(lower):
        out += f"extern \"C\" NK_PMPI_EXPORT void {s}({params}) {{ {impl}({args}); }}\n"
    return out


FORTRAN_INIT = """
// MPI_Init from Fortran reaches PMPI_Init without the C wrapper.
extern "C" void pmpi_init_(MPI_Fint* ierr);
extern "C" void pmpi_init_thread_(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr);
static void nk_f_mpi_init(MPI_Fint* ierr) {
  pmpi_init_(ierr);
  if (*ierr == MPI_SUCCESS) Agent::initialized();
}
static void nk_f_mpi_init_thread(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  pmpi_init_thread_(required, provided, ierr);
  if (*ierr == MPI_SUCCESS) Agent::initialized();
}
"""


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: gen_wrappers.py mpi_calls.def OUTPUT.cc")
    calls = []
    with open(sys.argv[1]) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if line and not line.startswith("#"):
                calls.append(Call(line, number))
    out = ["// Generated by gen_wrappers.py from mpi_calls.def: do not edit.",
           "#include <vector>", "", '#include "agent.h"', '#include "request_snapshot.h"', "",
           "using nk::pmpi::Agent;", "",
           "// Only the MPI entry points leave the library.",
           '#define NK_PMPI_EXPORT __attribute__((visibility("default")))', "", 'extern "C" {', ""]
    for c in calls:
        out.append(c_wrapper(c))
    out.append('}  // extern "C"\n')
    declared = set()
    out.append(FORTRAN_INIT)
    for s in f_symbols("mpi_init"):
        out.append(f'extern "C" NK_PMPI_EXPORT void {s}(MPI_Fint* ierr) {{ nk_f_mpi_init(ierr); }}')
    for s in f_symbols("mpi_init_thread"):
        out.append(f'extern "C" NK_PMPI_EXPORT void {s}(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) '
                   f'{{ nk_f_mpi_init_thread(required, provided, ierr); }}')
    out.append("")
    for c in calls:
        if c.role in FORTRAN_ROLES and c.extra.get("fortran") != "no":
            out.append(fortran_wrapper(c, declared))
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out))


main()
