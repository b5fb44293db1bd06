// The memory SPEC file of the harness's --memory option (gravfm.sim.memory_params.memory_file),
// and read-only mappings of the memory images it names. Shared by harness.cpp and
// memory_model_tb.cpp. Errors are std::runtime_error naming the file and line.
//
//   params WORD_BYTES RATE_FIXED LATENCY JITTER BANKS BANK_DEPTH SEED REORDER STUCK
//   ports P                  (AXI ports per memory)
//   image INDEX PATH         (one per memory, INDEX 0..; PATH runs to the end of the line)
#pragma once

#include "memory_model.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace gravfm {

struct MemorySpec {
    MemoryParams params{};
    unsigned ports_per_memory = 0;
    std::vector<std::string> images;  // by memory index
};

inline MemorySpec read_memory_spec(const char* path) {
    FILE* file = std::fopen(path, "r");
    if (!file) throw std::runtime_error(std::string("cannot open memory file ") + path);
    MemorySpec spec;
    bool have_params = false;
    char kind[16];
    int line = 0;
    auto fail = [&](const std::string& message) {
        std::fclose(file);
        throw std::runtime_error(std::string(path) + ": line " + std::to_string(line) + ": " + message);
    };
    while (std::fscanf(file, "%15s", kind) == 1) {
        ++line;
        MemoryParams& p = spec.params;
        unsigned long long rate = 0, seed = 0;
        if (!std::strcmp(kind, "params")) {
            if (std::fscanf(file, "%u %llu %u %u %u %u %llu %u %u", &p.word_bytes, &rate, &p.latency, &p.jitter,
                            &p.banks, &p.bank_depth, &seed, &p.reorder, &p.stuck) != 9)
                fail("params needs 9 numbers");
            p.rate_fixed = rate;
            p.seed = seed;
            have_params = true;
        } else if (!std::strcmp(kind, "ports")) {
            if (std::fscanf(file, "%u", &spec.ports_per_memory) != 1 || !spec.ports_per_memory)
                fail("ports needs a positive number");
        } else if (!std::strcmp(kind, "image")) {
            unsigned index = 0;
            char rest[4096];
            if (std::fscanf(file, "%u", &index) != 1 || !std::fgets(rest, sizeof rest, file))
                fail("image needs an index and a path");
            std::string image = rest;
            while (!image.empty() && (image.back() == '\n' || image.back() == '\r')) image.pop_back();
            const size_t start = image.find_first_not_of(' ');
            if (start == std::string::npos) fail("image needs a path");
            if (index != spec.images.size()) fail("images must come in index order 0, 1, ...");
            spec.images.push_back(image.substr(start));
        } else {
            fail(std::string("unknown ") + kind);
        }
    }
    std::fclose(file);
    if (!have_params || !spec.ports_per_memory || spec.images.empty())
        throw std::runtime_error(std::string(path) + ": needs params, ports and at least one image");
    return spec;
}

// A file mapped read-only (no copy: images can be gigabytes); an empty file maps to nothing.
class MappedImage {
public:
    explicit MappedImage(const std::string& path) {
        const int fd = ::open(path.c_str(), O_RDONLY);
        if (fd < 0) throw std::runtime_error("cannot open memory image " + path + ": " + std::strerror(errno));
        struct stat status;
        if (::fstat(fd, &status) != 0) {
            ::close(fd);
            throw std::runtime_error("cannot stat memory image " + path);
        }
        size_ = static_cast<uint64_t>(status.st_size);
        if (size_) {
            void* address = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
            if (address == MAP_FAILED) {
                ::close(fd);
                throw std::runtime_error("cannot map memory image " + path + ": " + std::strerror(errno));
            }
            data_ = static_cast<const uint8_t*>(address);
        }
        ::close(fd);  // the mapping stays valid
    }
    ~MappedImage() {
        if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    }
    MappedImage(const MappedImage&) = delete;
    MappedImage& operator=(const MappedImage&) = delete;

    const uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }

private:
    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
};

}  // namespace gravfm
