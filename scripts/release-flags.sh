# Sourced by every script that builds lanpushd in release (scripts/run, scripts/install, scripts/bench,
# Benchmarks/callgrind.sh, Benchmarks/soak.sh): the compile flags they share, and the link of the binary a user runs.
# Source it from the repository's root (the link's files are named from $PWD).
#
# Each function in a section of its own, so the release link (scripts/install) can lay out the functions of
# scripts/lanpushd.order together. They go on every release build of the same folder because SwiftPM does not compile
# a module again when only flags like these change: one release build without them (./scripts/run before
# ./scripts/install, the README's order) would leave the install linking whole files as single sections, ~2 MiB more
# resident (docs/BENCHMARKS.md, "Baseline memory"). A folder built before they were added: `rm -rf .build/release`.
#
# `-enforce-exclusivity=unchecked`: no run-time check that two accesses to a class's stored property or a global
# overlap. Swift makes that check at every such access in release builds too: with it, an HTTP notification takes 9 %
# more instructions and a fan-out 21 % more (Benchmarks/callgrind.sh). The compiler still proves what it can
# statically, and debug builds — every test — keep the run-time check.
release_compile_flags=(-Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections -Xswiftc -enforce-exclusivity=unchecked)

# The link of the binary a user runs (scripts/install; scripts/bench measures the same binary). A static Swift
# runtime: the service needs nothing from the toolchain (which may live under /root or /home, hidden by
# ProtectHome=), only libwebsockets, avahi-client and sqlite from Debian. lld with packed relative relocations (glibc
# >= 2.36), no exported symbols, and every function in a section of its own laid out in the order of
# scripts/lanpushd.order (what a running gateway executes, together on few pages; scripts/lanpushd.ld gathers those
# without a name): ~10 MiB less resident memory at start (docs/BENCHMARKS.md, "Baseline memory"). The add-on's
# Dockerfile links the same way. SwiftPM does not see the order and the script as inputs of the link: remove the old
# binary first, or it is not linked again.
release_link_flags=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic -Xlinker --symbol-ordering-file="$PWD/scripts/lanpushd.order" -Xlinker --no-warn-symbol-ordering -Xlinker -T -Xlinker "$PWD/scripts/lanpushd.ld" --static-swift-stdlib)
