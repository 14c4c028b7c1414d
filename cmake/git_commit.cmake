# Writes the commit crucible is built from into OUT (a header), at every build: the commit at
# the last configure would go stale with each new commit, and every run's manifest and the run
# history record it. "-dirty" marks a build from a tree whose tracked files differ from that
# commit; "unknown" a tree without git. The file is rewritten only when its text changes, so
# an unchanged commit recompiles nothing.
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE commit
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT commit)
  set(commit "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no
    WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE changes
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(changes)
    string(APPEND commit "-dirty")
  endif()
endif()
set(text "// Generated at build time (cmake/git_commit.cmake).\n#pragma once\n#define CRUCIBLE_GIT_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
