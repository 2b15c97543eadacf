# The hash-locked pins of some packages and of everything they need, taken from a file `make lock` wrote:
#
#   awk -v roots="hatchling" -f requirements/pins.awk requirements/dev.txt
#
# Prints the whole entry (pin, hashes, "# via" comments) of each package named in `roots` (space-separated) and of
# each package whose "# via" names one already printed, until no more are added: the requirements file pip needs
# to install those packages with --require-hashes. The images' build tools (hatchling) and the test engines'
# images (SecantusDB, Tansu) take their pins from requirements/dev.txt this way, never unpinned.

function normal(name) {
    name = tolower(name)
    sub(/\[.*/, "", name)
    gsub(/[-_.]+/, "-", name)
    return name
}

/^[A-Za-z0-9]/ {
    package = $1
    sub(/==.*/, "", package)
    package = normal(package)
    order[++count] = package
}

count && /^ *#/ {
    line = $0
    sub(/^ *# *(via)? */, "", line)
    if (line != "" && line !~ /^-/)
        needed_by[package] = needed_by[package] " " normal(line)
}

count { entry[package] = entry[package] $0 "\n" }

END {
    split(roots, named, " ")
    for (i in named)
        wanted[normal(named[i])] = 1
    do {
        added = 0
        for (i = 1; i <= count; i++) {
            package = order[i]
            if (package in wanted)
                continue
            split(needed_by[package], users, " ")
            for (j in users)
                if (users[j] in wanted) {
                    wanted[package] = 1
                    added = 1
                    break
                }
        }
    } while (added)
    for (i = 1; i <= count; i++)
        if (order[i] in wanted)
            printf "%s", entry[order[i]]
}
