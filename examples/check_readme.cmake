cmake_minimum_required(VERSION 3.25)
# Checks that a markdown page (README.md, or a docs/ page) contains SOURCE verbatim (inside a
# ```cpp block) and the golden OUTPUT verbatim (inside a ```text block), so the page's example
# compiles and prints what it says.
#   cmake -DREADME=<md> -DSOURCE=<cpp> -DOUTPUT=<txt> -P check_readme.cmake
# (-DDOC=<md> is the same as -DREADME=<md>.)
if(NOT DEFINED README AND DEFINED DOC)
  set(README "${DOC}")
endif()
foreach(var README SOURCE OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "usage: cmake -DREADME=<md> -DSOURCE=<cpp> -DOUTPUT=<txt> -P check_readme.cmake")
  endif()
endforeach()
file(READ "${README}" readme)
foreach(part SOURCE OUTPUT)
  file(READ "${${part}}" content)
  if(part STREQUAL "SOURCE")
    set(block "```cpp\n${content}```")
  else()
    set(block "```text\n${content}```")
  endif()
  string(FIND "${readme}" "${block}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${README} does not contain ${${part}} verbatim in a fenced block; "
                        "copy the file's current content into it")
  endif()
endforeach()
