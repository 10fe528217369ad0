# Sourced by every script that builds lanpushd in release (scripts/run, scripts/install, scripts/bench,
# Benchmarks/callgrind.sh, Benchmarks/soak.sh): the compile flags they share.
#
# Each function in a section of its own, so the release link (scripts/install) can lay out the functions of
# scripts/lanpushd.order together. They go on every release build of the same folder because SwiftPM does not compile
# a module again when only flags like these change: one release build without them (./scripts/run before
# ./scripts/install, the README's order) would leave the install linking whole files as single sections, ~2 MiB more
# resident (docs/BENCHMARKS.md, "Baseline memory"). A folder built before they were added: `rm -rf .build/release`.
release_compile_flags=(-Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections)
